// `--dry-run` on every write: print the request that would be sent (method, URL, headers with the
// key masked, body) and send nothing, as the Stripe CLI does.
import { maskKey } from '../../http/mask.js';
import { parseBaseUrl, plannedRequest } from '../../http/url.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import type { Ctx } from '../context.js';
import type { HttpMethod } from '../../http/types.js';

export interface PlannedRequest {
  method: HttpMethod;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** a fixed key, or true for the random one the real request would get */
  idempotencyKey?: string | true;
  v1?: boolean;
}

export async function printDryRun(ctx: Ctx, req: PlannedRequest): Promise<void> {
  const profile = await ctx.profile();
  const base = req.v1 ? profile.v1BaseUrl : profile.baseUrl;
  const key = req.v1 ? profile.v1ApiKey : profile.apiKey;
  // the client's own assembly (src/http/url.ts), with the key masked and header names as they are written
  const [apiKey, authHeader] = [key ? maskKey(key) : '<no key configured>', req.v1 ? 'x-api-key' : profile.authHeader];
  const idempotencyKey = req.idempotencyKey === true ? '<random UUID>' : req.idempotencyKey;
  const planned = plannedRequest(
    { base: parseBaseUrl(base ?? 'https://base.invalid'), apiKey, authHeader },
    { path: req.path, query: req.query, hasBody: req.body !== undefined, idempotencyKey },
  );
  const url = base ? planned.url.href : `<no base URL configured>${planned.url.pathname}${planned.url.search}`;
  const headers = Object.fromEntries(
    Object.entries(planned.headers).map(([k, v]) => [k.replace(/(^|-)[a-z]/g, (c) => c.toUpperCase()), v]),
  );
  const format = ctx.format();
  if (format === 'json' || format === 'ndjson') {
    const plan = { dry_run: true, method: req.method, url, headers, body: req.body ?? null };
    ctx.io.stdout.write(`${safeJson(plan, format === 'json' ? 2 : undefined)}\n`);
    return;
  }
  const lines = [`${req.method} ${url}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (req.body !== undefined) lines.push('', safeJson(req.body, 2));
  ctx.io.stdout.write(`${sanitizeForTerminal(lines.join('\n'), { keepNewlines: true })}\n`);
  ctx.warn('Dry run: nothing was sent.');
}
