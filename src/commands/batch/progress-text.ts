// The progress line of `crm batch` on a terminal: rows done and failed, the rate, the ETA the rate
// limit allows (src/output/eta.ts), and the wait while the pacer holds requests back.
import type { PaceInfo } from '../../http/types.js';
import type { ImportProgress } from '../../import/index.js';
import { etaMs, sendingRateNow, type SendingRate } from '../../output/eta.js';
import { count, plural } from '../../output/plural.js';

/** waits shorter than this are the pacer's ordinary spacing, not worth a word */
const WAIT_SHOWN_MS = 1000;

/** What the client's pacer knows (`client.pace()`; none for a dry run) and the time it is read at. */
interface PaceNow {
  pace?: PaceInfo;
  now: number;
  /** fed each time the line is drawn while sending: the rate the ETA goes by (waits left out when a limit is known) */
  sending?: SendingRate;
}

/**
 * One line under 80 columns for typical numbers: rows done (skipped ones from an earlier run
 * included) of all, rows not done (failed or invalid: the summary tells them apart), then the rate,
 * or, while the pacer holds requests back, the wait; the ETA the rate limit allows.
 */
export function progressText(p: ImportProgress, at?: PaceNow): string {
  if (p.phase === 'check') {
    const pct = p.bytesTotal > 0 ? ` (${Math.floor((100 * p.bytes) / p.bytesTotal)}%)` : '';
    return `checking: ${plural(p.rows, 'row')} read${pct}`;
  }
  const now = at?.now ?? 0;
  const wait = at?.pace?.waitingUntil !== undefined ? at.pace.waitingUntil - now : 0;
  const waiting = wait >= WAIT_SHOWN_MS ? `waiting ${formatDuration(wait / 1000)} (rate limit)` : '';
  const reading = `reading the CRM: ${count(p.rows)} records, ${plural(p.chunks, 'request')}`;
  if (p.phase === 'read') return [reading, waiting].filter(Boolean).join(' · ');
  const done = p.created + p.failed + p.invalid + p.skipped;
  const secs = p.elapsedMs / 1000;
  const rate = secs > 0 ? (p.created + p.failed) / secs : 0;
  const left = p.rowsTotal !== null ? Math.max(0, p.rowsTotal - done) : 0;
  const parts = [
    `${count(done)}${p.rowsTotal !== null ? `/${count(p.rowsTotal)}` : ''} rows`,
    `${count(p.failed + p.invalid)} failed`,
  ];
  if (!waiting) parts.push(`${count(Math.round(rate))} rows/s`);
  const perRequest = Math.max(1, p.rowsPerRequest);
  const requestsLeft = p.requestsLeft ?? Math.ceil(left / perRequest);
  const eta = left > 0 ? etaMs({ requestsLeft, now, pace: at?.pace, observedRatePerMs: ratePerMs(p, at) }) : undefined;
  if (eta !== undefined && eta > 0) parts.push(`ETA ${formatDuration(eta / 1000)}`);
  if (waiting) parts.push(waiting);
  return parts.join(' · ');
}

/** Requests answered per ms: while sending (a limit known: its waits are counted by etaMs), else overall; without a SendingRate, since the start. */
function ratePerMs(p: ImportProgress, at: PaceNow | undefined): number | undefined {
  // reconcile counts its requests (creates and updates carry different numbers of rows)
  const requests = p.requestsLeft !== undefined ? p.chunks : (p.created + p.failed) / Math.max(1, p.rowsPerRequest);
  if (!at?.sending) return p.elapsedMs > 0 ? requests / p.elapsedMs : undefined;
  const rate = sendingRateNow(at.sending, at.now, requests, at.pace);
  // until a second sample: since the start
  return rate ?? (p.elapsedMs > 0 && requests > 0 ? requests / p.elapsedMs : undefined);
}

/** A summary as a person reads it on stderr: counts with thousands separators (`2,985`), the time taken as time (`elapsed 1.2s`); JSON keeps the numbers. */
export function forPeople(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record).map(([k, v]) =>
      k === 'elapsed_ms' && typeof v === 'number'
        ? ['elapsed', v < 60_000 ? `${(Math.ceil(v / 100) / 10).toFixed(1)}s` : formatDuration(v / 1000)]
        : [k, typeof v === 'number' ? count(v) : v],
    ),
  );
}

/** `42s`, `14m5s`, `2h10m`: whole seconds, rounded up. */
export function formatDuration(s: number): string {
  const t = Math.ceil(s);
  if (t < 60) return `${t}s`;
  const m = Math.floor(t / 60);
  return m < 60 ? `${m}m${t % 60}s` : `${Math.floor(m / 60)}h${m % 60}m`;
}
