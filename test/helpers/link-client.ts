// A fake API client (its request, paginate and pages) lent the real core's link download and retry
// policy, on the test's clock: what a transcript download uses of the client besides the API.
import { createClient } from '../../src/http/client.js';
import type { Clock, HttpClient } from '../../src/http/types.js';

type ApiPart = Pick<HttpClient, 'baseUrl' | 'stats' | 'request' | 'paginate' | 'pages'>;

export function withLinks(
  fake: ApiPart,
  clock: Clock,
  opts: { maxRetries?: number; rateLimitBudgetMs?: number } = {},
): HttpClient {
  const real = createClient({
    baseUrl: 'http://127.0.0.1:1/api/v2',
    apiKey: 'service_test_0000000000000000',
    authHeader: 'x-api-key',
    clock,
    timeoutMs: 5_000,
    ...opts,
  });
  return Object.assign(fake, {
    getLink: (url, o) => real.getLink(url, o),
    retry: (attempt, o) => real.retry(attempt, o),
    waits: real.waits,
  } satisfies Pick<HttpClient, 'getLink' | 'retry' | 'waits'>);
}
