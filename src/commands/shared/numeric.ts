// One parser for every numeric flag: a plain decimal number (no sign, exponent, hex or Infinity)
// within the flag's range, else a usage error (exit 2). Refused, not clamped: a silently changed
// value surprises, and `--timeout 3000000` once overflowed Node's timer.
import { InvalidArgumentError, Option } from '@commander-js/extra-typings';
import { BATCH_MAX, PAGE_SIZE_MAX } from '../../api/resources.js';

interface NumericRange {
  min: number;
  max: number;
  integer: boolean;
  /** shown after the range, e.g. `seconds` */
  unit?: string;
}

/** The longest delay a Node timer holds (2^31 - 1 ms); longer ones fire at once. */
export const TIMER_MAX_MS = 2 ** 31 - 1;

const int = (min: number, max: number, unit?: string): NumericRange => ({ min, max, integer: true, unit });

export const RANGES = {
  timeoutSeconds: { min: 0.001, max: 86_400, integer: false, unit: 'seconds' },
  maxRetries: int(0, 100),
  pageLimit: int(1, PAGE_SIZE_MAX),
  /** --max: 0 would print nothing but a cursor */
  maxRecords: int(1, Number.MAX_SAFE_INTEGER),
  chunkSize: int(1, BATCH_MAX),
  /** the import engine's own bound (src/import/plan.ts) */
  batchConcurrency: int(1, 64),
  /** the download engine's own bound (src/commands/recordings/download.ts) */
  downloadConcurrency: int(1, 32),
  /** `get`/`delete` with several ids (src/commands/resources/many.ts) */
  idConcurrency: int(1, 32),
  port: int(0, 65_535),
  seed: int(0, 0xffff_ffff),
  rate: int(1, 1_000_000_000),
  /** windows and lifetimes the sandbox keeps in timers */
  windowMs: int(1, TIMER_MAX_MS, 'ms'),
  latencyMs: int(0, 600_000, 'ms'),
  probability: { min: 0, max: 1, integer: false },
} satisfies Record<string, NumericRange>;

/** The number `value` stands for, or an error message saying what is allowed. */
export function parseNumeric(
  value: string,
  range: NumericRange,
): { ok: true; value: number } | { ok: false; message: string } {
  const text = value.trim();
  const n = Number(text);
  const shaped = (range.integer ? /^\d+$/ : /^(\d+\.?\d*|\.\d+)$/).test(text);
  if (shaped && Number.isFinite(n) && n >= range.min && n <= range.max && (!range.integer || Number.isSafeInteger(n)))
    return { ok: true, value: n };
  const [what, unit] = [range.integer ? 'a whole number' : 'a number', range.unit ? ` (${range.unit})` : ''];
  return { ok: false, message: `expected ${what} from ${range.min} to ${range.max}${unit}, got '${value}'` };
}

/** A flag of this range; commander names the flag in the usage error. */
export const numericOption = <F extends string>(flags: F, description: string, range: keyof typeof RANGES) =>
  new Option(flags, description).argParser((value) => {
    const r = parseNumeric(value, RANGES[range]);
    if (!r.ok) throw new InvalidArgumentError(r.message);
    return r.value;
  });
