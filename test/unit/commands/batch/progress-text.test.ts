// The progress line of `crm batch`: rows, rate, the ETA the rate limit allows, the pacer's wait.
import { describe, expect, it } from 'vitest';
import { formatDuration, progressText, forPeople } from '../../../../src/commands/batch/progress-text.js';
import type { PaceInfo } from '../../../../src/http/types.js';
import type { ImportProgress } from '../../../../src/import/index.js';

const NOW = 1_000_000;
const base: ImportProgress = {
  phase: 'send',
  rowsTotal: 3000,
  rows: 3000,
  created: 0,
  failed: 0,
  invalid: 0,
  skipped: 0,
  chunks: 0,
  inFlight: 0,
  bytes: 0,
  bytesTotal: 0,
  elapsedMs: 0,
  rowsPerRequest: 1,
};
const at = (over: Partial<ImportProgress>, pace?: PaceInfo) => progressText({ ...base, ...over }, { pace, now: NOW });

describe('progressText', () => {
  it('while checking: rows read and how far through the file', () => {
    expect(at({ phase: 'check', rows: 1200, rowsTotal: null, bytes: 250, bytesTotal: 1000 })).toBe(
      'checking: 1,200 rows read (25%)',
    );
  });
  it('a 3,000-row one-request-per-row job at 200 a minute says 14 minutes from the first answer (and the last 200 at 7 a second)', () => {
    const pace: PaceInfo = { limit: 200, remaining: 199, resetAt: NOW + 59_990, windowMs: 60_000 };
    expect(at({ created: 1, elapsedMs: 150 }, pace)).toBe('1/3,000 rows · 0 failed · 7 rows/s · ETA 14m30s');
  });
  it('a batch create counts requests of rowsPerRequest rows: 3,000 rows in chunks of 100 fit in one window', () => {
    const pace: PaceInfo = { limit: 200, remaining: 199, resetAt: NOW + 59_990, windowMs: 60_000 };
    // the observed rate (100 rows in 0.5 s) says more than the limit here
    expect(at({ created: 100, elapsedMs: 500, rowsPerRequest: 100 }, pace)).toBe(
      '100/3,000 rows · 0 failed · 200 rows/s · ETA 15s',
    );
  });
  it('without pace information: the ETA from the observed rate alone, as before', () => {
    expect(progressText({ ...base, created: 100, elapsedMs: 10_000 })).toBe(
      '100/3,000 rows · 0 failed · 10 rows/s · ETA 4m50s',
    );
  });
  it('shows the wait while the pacer holds requests back', () => {
    const pace: PaceInfo = {
      limit: 200,
      remaining: 0,
      resetAt: NOW + 12_000,
      waitingUntil: NOW + 12_000,
      windowMs: 60_000,
    };
    // 12 s, then 14 windows of 200 (4 a second: the last one's take 48 s)
    expect(at({ created: 198, failed: 2, elapsedMs: 48_000 }, pace)).toBe(
      '200/3,000 rows · 2 failed · ETA 14m0s · waiting 12s (rate limit)',
    );
    // the pacer's ordinary spacing (under a second) is not a wait worth a word
    expect(at({ created: 10 }, { ...pace, waitingUntil: NOW + 300 })).not.toContain('waiting');
  });
  it('counts skipped rows (an earlier run sent them) as done, invalid ones as failed', () => {
    expect(at({ created: 5, failed: 1, invalid: 2, skipped: 7, elapsedMs: 1000, rowsTotal: null })).toBe(
      '15 rows · 3 failed · 6 rows/s',
    );
  });
  it('fits in 80 columns for typical numbers, a wait included', () => {
    const lines = [
      at(
        {
          rowsTotal: 300_000,
          created: 123_400,
          failed: 1200,
          invalid: 340,
          skipped: 5000,
          elapsedMs: 600_000,
          rowsPerRequest: 100,
        },
        { limit: 200, remaining: 0, resetAt: NOW + 42_000, waitingUntil: NOW + 42_000, windowMs: 60_000 },
      ),
      at(
        { rowsTotal: 10_000, created: 8123, failed: 45, invalid: 12, skipped: 1000, elapsedMs: 2_000_000 },
        { limit: 200, remaining: 0, resetAt: NOW + 59_000, waitingUntil: NOW + 59_000, windowMs: 60_000 },
      ),
    ];
    lines.push(
      at({
        rowsTotal: 300_000,
        created: 123_400,
        failed: 1200,
        invalid: 340,
        skipped: 5000,
        elapsedMs: 600_000,
        rowsPerRequest: 100,
      }),
    );
    for (const line of lines) expect(line.length, line).toBeLessThan(80);
  });
});

describe('formatDuration', () => {
  it('rounds up to whole seconds, then minutes and hours', () => {
    expect([0.2, 59, 59.5, 60, 119.5, 840, 3599.2, 3600, 7260].map(formatDuration)).toEqual([
      '1s',
      '59s',
      '1m0s',
      '1m0s',
      '2m0s',
      '14m0s',
      '1h0m',
      '1h0m',
      '2h1m',
    ]);
  });
});

describe('forPeople (the summary table on stderr)', () => {
  it('counts with separators, the time as time; other cells as they are (issue 29: "rows 2985", "elapsed_ms 63187")', () => {
    expect(forPeople({ resource: 'contacts', rows: 2985, created: 0, elapsed_ms: 1234, rejects_file: null })).toEqual({
      ...{ resource: 'contacts', rows: '2,985', created: '0', elapsed: '1.3s', rejects_file: null },
    });
    expect(forPeople({ elapsed_ms: 63_187 })).toEqual({ elapsed: '1m4s' });
    expect(forPeople({ elapsed_ms: 0 })).toEqual({ elapsed: '0.0s' });
  });
});
