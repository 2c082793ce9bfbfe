// The pure parts of `crm snapshot --transcripts` (src/commands/snapshot/transcripts.ts): the ETA is the
// longer of what the API's limit (a GET a transcript) and the download limit (a download a transcript)
// allow; the option needs recordings; left_out drops transcripts only when they are taken.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkTranscriptsOption,
  transcriptsEtaMs,
  transcriptsProgressText,
} from '../../../src/commands/snapshot/transcripts.js';
import type { DownloadProgress } from '../../../src/commands/recordings/download-engine.js';
import type { PaceInfo } from '../../../src/http/types.js';
import { etaMs } from '../../../src/output/eta.js';
import { runs } from '../../helpers/property.js';

const progress = (total: number, done: number, downloaded = done): DownloadProgress => ({
  phase: 'downloading',
  listed: total,
  total,
  done,
  downloaded,
  skipped: done - downloaded,
  failed: 0,
});

const pace = fc.record(
  {
    limit: fc.integer({ min: 1, max: 1000 }),
    remaining: fc.integer({ min: 0, max: 1000 }),
    resetAt: fc.integer({ min: 0, max: 120_000 }),
    windowMs: fc.integer({ min: 100, max: 120_000 }),
  },
  { requiredKeys: ['windowMs'] },
) as fc.Arbitrary<PaceInfo>;

describe('transcriptsEtaMs', () => {
  it('is never less than either limit allows for what is left, never shorter with one more left, 0 when none is', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5000 }),
        fc.integer({ min: 0, max: 5000 }),
        fc.option(pace, { nil: undefined }),
        fc.option(pace, { nil: undefined }),
        fc.integer({ min: 0, max: 600_000 }),
        (total, doneRaw, api, downloads, elapsedMs) => {
          const done = Math.min(total, doneRaw);
          const at = { now: 1000, elapsedMs, api, downloads };
          const eta = transcriptsEtaMs(progress(total, done), at);
          const left = total - done;
          if (left === 0) expect(eta).toBe(0);
          for (const x of [api, downloads]) {
            const floor = etaMs({ requestsLeft: left, now: 1000, pace: x });
            if (floor !== undefined && eta !== undefined) expect(eta).toBeGreaterThanOrEqual(floor - 1e-6);
          }
          // nothing known of either limit, and nothing sent yet: no ETA
          if (api === undefined && downloads === undefined && left > 0 && (done === 0 || elapsedMs === 0))
            expect(eta).toBeUndefined();
          const more = transcriptsEtaMs(progress(total + 1, done), at);
          if (eta !== undefined && more !== undefined) expect(more).toBeGreaterThanOrEqual(eta - 1e-6);
        },
      ),
      runs(),
    );
  });

  it('a tight download limit sets it: 40 left at 4 a second are about 10 s away, whatever the API allows', () => {
    const eta = transcriptsEtaMs(progress(50, 10), {
      now: 0,
      elapsedMs: 0,
      api: { limit: 1000, remaining: 1000, windowMs: 60_000 },
      downloads: { limit: 4, remaining: 0, resetAt: 1000, windowMs: 1000 },
    });
    expect(eta).toBe(10_000);
    expect(
      transcriptsProgressText(progress(50, 10), {
        now: 0,
        elapsedMs: 0,
        downloads: { limit: 4, remaining: 0, resetAt: 1000, windowMs: 1000 },
      }),
    ).toBe('Transcripts 10/50 (10 new, 0 already there, 0 failed) · ETA 10s');
  });
});

describe('--transcripts', () => {
  it('needs recordings among the collections (exit 2)', () => {
    expect(() => checkTranscriptsOption(true, ['contacts', 'deals'])).toThrow(/--transcripts needs recordings/);
    expect(() => checkTranscriptsOption(true, ['recordings'])).not.toThrow();
    expect(() => checkTranscriptsOption(undefined, ['contacts'])).not.toThrow();
  });
});
