// One parser for every numeric flag: a plain decimal number (no sign, exponent, hex or Infinity)
// within the flag's range, or a usage error (exit 2) naming the flag and the range. Out-of-range
// values are refused, not clamped: `--timeout 3000000` overflowed Node's timer (it fired at once),
// and a silently changed value is a surprise either way.
import { InvalidArgumentError } from '@commander-js/extra-typings';
import { BATCH_MAX, PAGE_SIZE_MAX } from '../../api/resources.js';

export interface NumericRange {
  min: number;
  max: number;
  /** whole numbers only */
  integer: boolean;
  /** shown after the range, e.g. `seconds` */
  unit?: string;
}

/** The longest delay a Node timer holds (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
export const TIMER_MAX_MS = 2 ** 31 - 1;

const int = (min: number, max: number, unit?: string): NumericRange => ({ min, max, integer: true, unit });

/** Every numeric flag's range, in one place. */
export const RANGES = {
  /** --timeout: per request; a day is far beyond any real answer and well within a timer */
  timeoutSeconds: { min: 0.001, max: 86_400, integer: false, unit: 'seconds' },
  maxRetries: int(0, 100),
  pageLimit: int(1, PAGE_SIZE_MAX),
  /** --max: 0 would print nothing but a cursor */
  maxRecords: int(1, Number.MAX_SAFE_INTEGER),
  chunkSize: int(1, BATCH_MAX),
  /** the import engine's own bound (src/import/plan.ts) */
  batchConcurrency: int(1, 64),
  /** the download engine's own bound (MAX_CONCURRENCY in src/commands/recordings/download.ts) */
  downloadConcurrency: int(1, 32),
  port: int(0, 65_535),
  seed: int(0, 0xffff_ffff),
  rate: int(1, 1_000_000_000),
  /** windows and lifetimes the sandbox keeps in timers */
  windowMs: int(1, TIMER_MAX_MS, 'ms'),
  latencyMs: int(0, 600_000, 'ms'),
  probability: { min: 0, max: 1, integer: false },
} satisfies Record<string, NumericRange>;

const WHOLE = /^\d+$/;
const DECIMAL = /^(\d+\.?\d*|\.\d+)$/;

function describe(range: NumericRange): string {
  const kind = range.integer ? 'a whole number' : 'a number';
  return `${kind} from ${range.min} to ${range.max}${range.unit ? ` (${range.unit})` : ''}`;
}

/** The number `value` stands for, or an error message saying what is allowed. */
export function parseNumeric(value: string, range: NumericRange): { ok: true; value: number } | { ok: false; message: string } {
  const text = value.trim();
  const n = Number(text);
  const shaped = (range.integer ? WHOLE : DECIMAL).test(text);
  if (!shaped || !Number.isFinite(n) || n < range.min || n > range.max || (range.integer && !Number.isSafeInteger(n))) {
    return { ok: false, message: `expected ${describe(range)}, got '${value}'` };
  }
  return { ok: true, value: n };
}

/** A commander argParser for a flag of this range; commander names the flag in the error (exit 2). */
export function numeric(range: NumericRange): (value: string) => number {
  return (value) => {
    const r = parseNumeric(value, range);
    if (!r.ok) throw new InvalidArgumentError(r.message);
    return r.value;
  };
}
