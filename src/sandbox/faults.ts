// Fault injection (docs/sandbox.md, "Faults"): random faults by probability, narrowed by a path
// regex, and a deterministic queue of one-shot faults for the next matching requests.
import { FAULT_KINDS, type FaultKind, type FaultRates } from './types.js';
import { RawNumber } from '../json/exact-json.js';
import { isPlainObject } from './validation.js';

export function isFaultKind(kind: string): kind is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(kind);
}

/** A number from 0 to 1 (one no double holds as the double it rounds to: a rate is used as one), else undefined. */
export function probability(value: unknown): number | undefined {
  const p = value instanceof RawNumber ? Number(value.text) : value;
  return typeof p === 'number' && p >= 0 && p <= 1 ? p : undefined;
}

/** One checked `kind: probability`; the Error names `where`. */
function rate(kind: string, value: unknown, where: string): [FaultKind, number] {
  if (!isFaultKind(kind)) throw new Error(`${where}: unknown kind "${kind}" (kinds: ${FAULT_KINDS.join(', ')})`);
  const p = probability(value);
  if (p === undefined) throw new Error(`${where}: probability must be a number from 0 to 1`);
  return [kind, p];
}

function total(entries: Array<[FaultKind, number]>): FaultRates {
  const sum = entries.reduce((a, [, p]) => a + p, 0);
  if (sum > 1 + 1e-9) throw new Error(`fault probabilities add up to ${sum}, more than 1`);
  return Object.fromEntries(entries);
}

/** `500-after-write:0.05,drop:0.02` → `{ '500-after-write': 0.05, drop: 0.02 }`; throws naming the bad part. */
export function parseFaultSpec(spec: string): FaultRates {
  const entries: Array<[FaultKind, number]> = [];
  for (const part of spec.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const colon = part.lastIndexOf(':');
    if (colon <= 0) throw new Error(`fault "${part}": expected kind:probability (kinds: ${FAULT_KINDS.join(', ')})`);
    const kind = part.slice(0, colon).trim();
    const text = part.slice(colon + 1).trim();
    if (entries.some(([k]) => k === kind)) throw new Error(`fault "${part}": kind "${kind}" given twice`);
    entries.push(rate(kind, text === '' ? NaN : Number(text), `fault "${part}"`));
  }
  return total(entries);
}

/** Validates a `{kind: probability}` object (the control endpoint's `faults`). */
export function validateFaultRates(value: unknown): FaultRates {
  if (!isPlainObject(value)) throw new Error('faults must be an object of kind: probability');
  return total(Object.entries(value).map(([kind, p]) => rate(kind, p, `fault "${kind}"`)));
}

export type QueuedFault = { kind: FaultKind; method?: string; path?: RegExp; count: number };
type FaultConfig = { failRate: number; latencyMs: number; rates: FaultRates; paths?: RegExp };

export class FaultInjector {
  /** one-shot faults for the next matching requests, served before the random ones */
  queue: QueuedFault[] = [];

  constructor(
    public config: FaultConfig,
    private readonly random: () => number,
  ) {}

  pending() {
    return this.queue.map((q) => ({ kind: q.kind, method: q.method, path: q.path?.source, count: q.count }));
  }

  /** The fault for this counted request, if any: the queue first, then the random ones. */
  choose(method: string, path: string): FaultKind | undefined {
    const i = this.queue.findIndex((q) => (!q.method || q.method === method) && (!q.path || q.path.test(path)));
    const queued = this.queue[i];
    if (queued) {
      if (--queued.count <= 0) this.queue.splice(i, 1);
      return queued.kind;
    }
    const { failRate, rates, paths } = this.config;
    if (paths && !paths.test(path)) return undefined;
    const r = this.random();
    let edge = failRate;
    if (r < edge) return '500';
    for (const kind of FAULT_KINDS) {
      edge += rates[kind] ?? 0;
      if (r < edge) return kind;
    }
    return undefined;
  }
}

/** A regular expression from user input, or an Error naming it. */
export function compileRegex(source: string, what: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new Error(`${what}: invalid regular expression "${source}": ${(err as Error).message}`);
  }
}
