// How a chunk reaches the API. The engine takes any BatchSender (tests inject fakes); this one uses
// the HTTP core, which retries 429/5xx under the chunk's Idempotency-Key and throws CrmError
// subclasses when the retries run out.
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

/**
 * Sends one chunk. Throws InterruptedError only when the request was never sent (Ctrl-C stopped it
 * before it went out, e.g. waiting for the rate limit): once sent, a request runs to its answer.
 */
export type BatchSender = (req: BatchRequest) => Promise<BatchResponse>;

/**
 * No abort signal reaches the request: a batch request cancelled in flight may already have been
 * written, and only its answer lets the journal record the chunk. The client's own signal (Ctrl-C)
 * still stops its waits before a request is sent; once sent, its retries run to the end
 * (finishInDoubt), so an answer lost to a 500 or a dropped connection is still learned.
 */
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
