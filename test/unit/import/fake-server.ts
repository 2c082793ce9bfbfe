// A fake batch endpoint for the engine tests: creates records, answers per item, remembers
// Idempotency-Keys like the real server (same key: the cached answer, nothing created again), and
// lets a test inject failures before or after the write.
import type { ApiRecord, BatchEnvelope, BatchItem } from '../../../src/api/envelopes.js';
import { ServerError } from '../../../src/http/errors.js';
import type { BatchRequest, BatchResponse, BatchSender } from '../../../src/import/send/sender.js';

export type Fault = 'before' | 'after' | undefined;

export interface FakeServer {
  send: BatchSender;
  /** every request received, in order */
  calls: BatchRequest[];
  /** every record created, in order */
  created: ApiRecord[];
  replays: number;
  /** drop every remembered key (a server past its 24 h) */
  forget(): void;
  /** records refused with an item error besides those without an email (a cause fixed later: unset it) */
  refuse?: (record: ApiRecord) => boolean;
  /** decide a fault per request; `before`: 500 without writing; `after`: writes, then 500 */
  fault?: (req: BatchRequest, n: number) => Fault | Error;
  /** when set, each request waits for the test to release it */
  hold?: boolean;
  pending: Array<{ req: BatchRequest; release: () => void }>;
  /** resolves once at least `n` requests are held */
  waitPending(n: number): Promise<void>;
  /** release every held request */
  releaseAll(): void;
  maxInFlight: number;
}

export function fakeServer(): FakeServer {
  const cache = new Map<string, BatchEnvelope>();
  let nextId = 1;
  let inFlight = 0;
  let waiters: Array<{ n: number; resolve: () => void }> = [];
  const wake = (): void => {
    waiters = waiters.filter((w) => (s.pending.length >= w.n ? (w.resolve(), false) : true));
  };
  const s: FakeServer = {
    waitPending: (n) =>
      new Promise<void>((resolve) => {
        waiters.push({ n, resolve });
        wake();
      }),
    releaseAll: () => s.pending.splice(0).forEach((p) => p.release()),
    calls: [],
    created: [],
    replays: 0,
    pending: [],
    maxInFlight: 0,
    forget: () => cache.clear(),
    send: async (req: BatchRequest): Promise<BatchResponse> => {
      s.calls.push(req);
      inFlight++;
      s.maxInFlight = Math.max(s.maxInFlight, inFlight);
      try {
        if (s.hold) {
          await new Promise<void>((release) => {
            s.pending.push({ req, release });
            wake();
          });
        }
        const f = s.fault?.(req, s.calls.length);
        if (f instanceof Error) throw f;
        if (f === 'before') throw new ServerError('injected 500', { status: 500, code: 'INTERNAL_ERROR' });
        const cached = cache.get(req.key);
        if (cached) {
          s.replays++;
          return { envelope: cached, replayed: true };
        }
        expectBody(req);
        const items: BatchItem[] = req.records.map((r, index) => {
          const email = r.email;
          if (typeof email !== 'string' || !email.includes('@') || s.refuse?.(r) === true) {
            return { index, status: 'error', error: { code: 'VALIDATION_FAILED', message: 'email must contain @' } };
          }
          const rec = { id: `con_${nextId++}`, ...r };
          s.created.push(rec);
          return { index, status: 'created', data: rec };
        });
        const failed = items.filter((i) => i.status === 'error').length;
        const envelope: BatchEnvelope = {
          object: 'batch',
          data: { items, summary: { total: items.length, succeeded: items.length - failed, failed } },
          meta: { api_version: '2', request_id: `req_${s.calls.length}`, timestamp: new Date(0).toISOString() },
        };
        cache.set(req.key, envelope);
        if (f === 'after')
          throw new ServerError('injected 500 after the write', { status: 500, code: 'INTERNAL_ERROR' });
        return { envelope, retries: 0 };
      } finally {
        inFlight--;
      }
    },
  };
  return s;
}

function expectBody(req: BatchRequest): void {
  if (JSON.stringify(req.records) !== req.body) throw new Error('records and body differ');
  if (req.records.length < 1 || req.records.length > 100) throw new Error(`bad batch size ${req.records.length}`);
}

/** Emails created more than once. */
export function duplicates(created: ApiRecord[]): string[] {
  const seen = new Set<string>();
  const dup: string[] = [];
  for (const r of created) {
    const e = String(r.email);
    if (seen.has(e)) dup.push(e);
    seen.add(e);
  }
  return dup;
}

/** Let every pending promise callback run (no timers involved). */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}
