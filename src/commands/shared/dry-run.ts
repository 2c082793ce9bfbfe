// `--dry-run` on every write: print the request that would be sent (method, URL, headers with the
// key masked, body) and send nothing, as the Stripe CLI does.
import { maskKey } from '../../http/mask.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import { USER_AGENT } from '../../version.js';
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
  const base = (req.v1 ? profile.v1BaseUrl : profile.baseUrl) ?? '<no base URL configured>';
  const key = req.v1 ? profile.v1ApiKey : profile.apiKey;
  const shown = key ? maskKey(key) : '<no key configured>';
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) qs.set(k, String(v));
  const url = `${base.replace(/\/+$/, '')}${req.path}${qs.size ? `?${qs.toString()}` : ''}`;
  const headers: Record<string, string> = {};
  if (profile.authHeader === 'bearer' && !req.v1) headers.Authorization = `Bearer ${shown}`;
  else headers['X-Service-Api-Key'] = shown;
  headers.Accept = 'application/json';
  headers['User-Agent'] = USER_AGENT;
  if (req.body !== undefined) headers['Content-Type'] = 'application/json';
  if (req.idempotencyKey !== undefined) {
    headers['Idempotency-Key'] = req.idempotencyKey === true ? '<random UUID>' : req.idempotencyKey;
  }
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
