// The retry layer's word on a request as a whole (src/http/retry-loop.ts): its final error is `unsent`
// exactly when no attempt can have been carried out (each failed before reaching the API, or was
// answered 429), so that a write one attempt may have reached is never reported as not sent
// (issue 20: a chunk cut off mid-request by a proxy going away, then refused by it, read "not sent").
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { FakeClock } from '../../helpers/clock.js';
import { ServerError, RateLimitError, type CrmError } from '../../../src/http/errors.js';
import { neverReached } from '../../../src/http/network-error.js';
import { withRetries } from '../../../src/http/retry-loop.js';
import type { Failure } from '../../../src/http/types.js';

const outcomes = [
  'ECONNREFUSED',
  'PROXY_REFUSED',
  'PROXY_TUNNEL_DROPPED',
  'ECONNRESET',
  'UND_ERR_SOCKET',
  'TIMEOUT',
  429,
  500,
  503,
] as const;
type Outcome = (typeof outcomes)[number];

function failure(o: Outcome): Failure {
  if (typeof o === 'number') {
    const error =
      o === 429 ? new RateLimitError('slow down', { status: 429 }) : new ServerError(`HTTP ${o}`, { status: o });
    return { error, status: o, ...(o === 429 ? { retryAfter: '1' } : {}) };
  }
  return { error: new ServerError(`failed: ${o}`, { code: o }), errorCode: o };
}

describe('withRetries: unsent', () => {
  it('is set on the final error exactly when every attempt failed before reaching the API or was answered 429', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...outcomes), { minLength: 1, maxLength: 6 }), async (tries) => {
        const policy = {
          clock: new FakeClock(),
          maxRetries: tries.length - 1,
          budgetMs: 3_600_000,
          method: 'POST' as const,
          hasIdempotencyKey: true,
          noteWait: () => undefined,
          waitSignal: () => undefined,
          orConcurrency: '',
        };
        let n = 0;
        const err = (await withRetries(policy, async () => ({
          ok: false,
          failure: failure(tries[Math.min(n++, tries.length - 1)]!),
        })).catch((e: unknown) => e)) as CrmError;
        const made = tries.slice(0, n);
        const none = made.every((o) => o === 429 || (typeof o === 'string' && neverReached(o)));
        expect(err.unsent === true, `${made.join(', ')}`).toBe(none);
      }),
      runs(100),
    );
  });
});
