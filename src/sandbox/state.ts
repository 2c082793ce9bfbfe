// Everything a running sandbox holds, built once from its options: the store, keys, limiters,
// the idempotency cache, faults, transcript tokens and the request log.
import { CursorCodec } from './cursor.js';
import { FaultInjector, compileRegex } from './faults.js';
import { IdempotencyCache } from './idempotency.js';
import { cryptoRandom, mulberry32, newToken } from './random.js';
import { WindowLimiter } from './rate-limiter.js';
import { SEED_COUNTS, seedStore } from './seed.js';
import { Store, type StoreSnapshot } from './store.js';
import type { KeyDef, SandboxOptions } from './types.js';
import type { SnapshotTranscripts } from './snapshot-transcripts.js';

/** All keys share one organization. */
export const ORGANIZATION = 'org_sandbox';

/** Everything a running sandbox holds (the origins are known once it listens). */
export type SandboxState = ReturnType<typeof createState>;

/** `from`: the records of `--from DIR`, served at start and after every reset; `transcripts`: its transcript files. */
export function createState(
  options: SandboxOptions,
  keys: KeyDef[],
  from?: StoreSnapshot,
  transcripts?: SnapshotTranscripts,
) {
  const now = options.now ?? Date.now;
  const random = options.random ?? cryptoRandom;
  // Ids come from their own stream: seeded runs give the same ids for the same requests.
  const idRandom = options.seed === undefined ? cryptoRandom : mulberry32((options.seed ^ 0x1d5) >>> 0);
  const window = options.rateWindowMs ?? 60_000;
  const state = {
    now,
    seed: options.seed,
    keys: new Map(keys.map((k) => [k.key, k])),
    store: new Store(idRandom, now),
    keyLimiter: new WindowLimiter(options.rateLimit ?? 200, window, now, options.rateLimitKind),
    orgLimiter: new WindowLimiter(options.orgRateLimit ?? 1000, window, now, options.rateLimitKind),
    downloadLimiter: new WindowLimiter(options.downloadRateLimit ?? 20, options.downloadWindowMs ?? 1000, now),
    idempotency: new IdempotencyCache(now),
    faults: new FaultInjector(
      {
        failRate: options.failRate ?? 0,
        latencyMs: options.latencyMs ?? 0,
        rates: options.faults ?? {},
        paths: options.faultPaths ? compileRegex(options.faultPaths, 'fault paths') : undefined,
      },
      random,
    ),
    tokens: new TranscriptTokens(options.transcriptTtlMs ?? 300_000, now),
    /** `--from DIR`: recording id → DIR/transcripts/<safe id>.json (served instead of the generated transcript) */
    snapshotTranscripts: transcripts,
    log: new RequestLog(),
    v1InteractionsCursor: options.v1InteractionsCursor ?? false,
    /** seals and opens list cursors (a per-sandbox secret; derived from the seed when seeded) */
    cursors: CursorCodec.forSeed(options.seed),
    /** how X-RateLimit-Reset and Retry-After are written (changeable through /__sandbox/limits) */
    rateFormat: { reset: options.rateResetFormat ?? 'delta', retryAfter: options.retryAfterFormat ?? 'seconds', now },
    origin: '',
    downloadOrigin: '',
    /** empties the store and reseeds it with the start seed (and counts), or loads the snapshot again (`--from`) */
    reset() {
      this.store.clear();
      const { seed, seedRecords } = options;
      if (seed !== undefined || seedRecords) seedStore(this.store, seed ?? 0, { ...SEED_COUNTS, ...seedRecords });
      if (from) this.store.restore(from);
      this.tokens.clear();
      this.idempotency.clear();
    },
  };
  state.reset();
  return state;
}

/** Transcript download tokens: valid `ttlMs`, reusable while valid; expired ones pruned as new ones are issued. */
class TranscriptTokens {
  private tokens = new Map<string, { recordingId: string; expiresAt: number }>();

  constructor(
    public ttlMs: number,
    private readonly now: () => number,
  ) {}

  issue(recordingId: string): string {
    for (const [token, entry] of this.tokens) if (entry.expiresAt <= this.now()) this.tokens.delete(token);
    const token = newToken();
    this.tokens.set(token, { recordingId, expiresAt: this.now() + this.ttlMs });
    return token;
  }

  /** The recording id of a valid token, else undefined (unknown or expired). */
  resolve(token: string): string | undefined {
    const entry = this.tokens.get(token);
    return entry && entry.expiresAt > this.now() ? entry.recordingId : undefined;
  }

  clear(): void {
    this.tokens.clear();
  }
}

export interface LogEntry {
  index: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  status: number | null;
  fault: string | null;
  replayed: boolean;
  /** the handler ran and answered 2xx: its write happened (also under an after-write fault); false for replays and refusals */
  applied: boolean;
  request_id: string;
  /** the listener that received it: the API's origin, or the transcript download origin */
  listener: 'api' | 'download';
}

const MAX_ENTRIES = 50_000;

/** What reached the sandbox (the control endpoint's request log), auth header values replaced; the last MAX_ENTRIES kept. */
class RequestLog {
  private entries: LogEntry[] = [];
  total = 0;

  add(entry: Omit<LogEntry, 'index'>): LogEntry {
    const full = { index: this.total++, ...entry };
    if (this.entries.push(full) > MAX_ENTRIES) this.entries.shift();
    return full;
  }

  since(index: number): LogEntry[] {
    return this.entries.slice(Math.max(0, index - (this.total - this.entries.length)));
  }
}
