// How a chunk reaches the API (tests inject fakes).
import type { ApiRecord, BatchEnvelope } from '../api/envelopes.js';
import type { HttpClient } from '../http/types.js';

export interface BatchRequest {
  resource: string;
  /** the chunk's sequence number, 1-based */
  seq: number;
  /** the Idempotency-Key to send (derived from the body) */
  key: string;
  /** the records, in chunk order; JSON.stringify(records) === body */
  records: ApiRecord[];
  body: string;
}

export interface BatchResponse {
  envelope: BatchEnvelope;
  /** how many times the request was retried */
  retries?: number;
  /** the server answered from its idempotency cache (`Idempotent-Replayed: true`) */
  replayed?: boolean;
}

/** Throws InterruptedError only when the request was never sent. */
export type BatchSender = (req: BatchRequest) => Promise<BatchResponse>;

/** No abort signal reaches the request: one cancelled in flight may have been written, and only its answer lets the journal record it. */
export function httpBatchSender(client: HttpClient): BatchSender {
  return async (req) => {
    const res = await client.request<BatchEnvelope>({
      method: 'POST',
      path: `/${req.resource}/batch`,
      body: req.records,
      idempotencyKey: req.key,
      expect: 'batch',
      finishInDoubt: true,
    });
    const replayed = Object.entries(res.headers ?? {}).some(([k, v]) => k.toLowerCase() === 'idempotent-replayed' && v === 'true');
    return { envelope: res.body, retries: res.retries, replayed };
  };
}
