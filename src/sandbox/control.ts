// The control endpoint `/__sandbox/*` (docs/sandbox.md, "Faults"): the request log, faults,
// limits, forgetting idempotency keys, reset and stats. No key, no rate limit, loopback only.
import { RESOURCES } from '../api/resources.js';
import { ApiError } from './responses.js';
import { compileRegex, isFaultKind, validateFaultRates, type QueuedFault } from './faults.js';
import { RESET_FORMATS, RETRY_AFTER_FORMATS } from './rate-limiter.js';
import type { SandboxState } from './state.js';
import type { SandboxResponse } from './types.js';
import { isPlainObject, parseJson } from './validation.js';

export const CONTROL_PREFIX = '/__sandbox';

const ok = (body: unknown): SandboxResponse => ({ status: 200, headers: {}, body });
const bad = (message: string) => new ApiError(422, 'VALIDATION_FAILED', message);

function objectBody(raw: string): Record<string, unknown> {
  const body = raw.trim() === '' ? {} : parseJson(raw);
  if (!isPlainObject(body)) throw new ApiError(422, 'INVALID_BODY', 'The body must be a JSON object');
  return body;
}

function optionalNumber(body: Record<string, unknown>, name: string, check: (n: number) => boolean, what: string): number | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !check(v)) throw bad(`${name} must be ${what}`);
  return v;
}

const positiveInt = (n: number) => Number.isInteger(n) && n > 0;

function faultsState(state: SandboxState) {
  const c = state.faults.config;
  return { fail_rate: c.failRate, latency_ms: c.latencyMs, faults: c.rates, paths: c.paths?.source ?? null, next: state.faults.pending() };
}

function limitsState(state: SandboxState) {
  return {
    rate_limit: state.keyLimiter.limit,
    org_rate_limit: state.orgLimiter.limit,
    rate_window_ms: state.keyLimiter.windowMs,
    download_rate_limit: state.downloadLimiter.limit,
    download_window_ms: state.downloadLimiter.windowMs,
    transcript_ttl_ms: state.tokens.ttlMs,
    rate_reset_format: state.rateFormat.reset,
    retry_after_format: state.rateFormat.retryAfter,
  };
}

function optionalChoice<T extends string>(body: Record<string, unknown>, name: string, allowed: readonly T[]): T | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) throw bad(`${name} must be one of ${allowed.join(', ')}`);
  return v as T;
}

function parseQueue(value: unknown): QueuedFault[] {
  if (!Array.isArray(value)) throw bad('next must be an array');
  return value.map((item: unknown, i) => {
    if (!isPlainObject(item)) throw bad(`next[${i}] must be an object`);
    const { kind, method, path, count } = item;
    if (typeof kind !== 'string' || !isFaultKind(kind)) throw bad(`next[${i}].kind is not a fault kind`);
    if (method !== undefined && typeof method !== 'string') throw bad(`next[${i}].method must be a string`);
    if (path !== undefined && typeof path !== 'string') throw bad(`next[${i}].path must be a regular expression string`);
    if (count !== undefined && (typeof count !== 'number' || !positiveInt(count))) throw bad(`next[${i}].count must be a positive integer`);
    return {
      kind,
      method: method?.toUpperCase(),
      path: path === undefined ? undefined : wrap(() => compileRegex(path, `next[${i}].path`)),
      count: count ?? 1,
    };
  });
}

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw bad((err as Error).message);
  }
}

function setFaults(state: SandboxState, body: Record<string, unknown>): SandboxResponse {
  const failRate = optionalNumber(body, 'fail_rate', (n) => n >= 0 && n <= 1, 'a number from 0 to 1') ?? 0;
  const latencyMs = optionalNumber(body, 'latency_ms', (n) => Number.isInteger(n) && n >= 0, 'a non-negative integer') ?? 0;
  const rates = body.faults === undefined ? {} : wrap(() => validateFaultRates(body.faults));
  if (body.paths !== undefined && body.paths !== null && typeof body.paths !== 'string') throw bad('paths must be a regular expression string');
  const paths = typeof body.paths === 'string' ? wrap(() => compileRegex(body.paths as string, 'paths')) : undefined;
  const next = body.next === undefined ? undefined : parseQueue(body.next);
  state.faults.config = { failRate, latencyMs, rates, paths };
  // `next` replaces the queue when given (`next: []` empties it); otherwise the queue stays.
  if (next) {
    state.faults.clearQueue();
    state.faults.enqueue(next);
  }
  return ok(faultsState(state));
}

function setLimits(state: SandboxState, body: Record<string, unknown>): SandboxResponse {
  const n = (name: string) => optionalNumber(body, name, positiveInt, 'a positive integer');
  const values = {
    rate: n('rate_limit'),
    org: n('org_rate_limit'),
    window: n('rate_window_ms'),
    download: n('download_rate_limit'),
    downloadWindow: n('download_window_ms'),
    ttl: n('transcript_ttl_ms'),
    resetFormat: optionalChoice(body, 'rate_reset_format', RESET_FORMATS),
    retryAfterFormat: optionalChoice(body, 'retry_after_format', RETRY_AFTER_FORMATS),
  };
  if (values.rate !== undefined) state.keyLimiter.limit = values.rate;
  if (values.org !== undefined) state.orgLimiter.limit = values.org;
  if (values.window !== undefined) state.keyLimiter.windowMs = state.orgLimiter.windowMs = values.window;
  if (values.download !== undefined) state.downloadLimiter.limit = values.download;
  if (values.downloadWindow !== undefined) state.downloadLimiter.windowMs = values.downloadWindow;
  if (values.ttl !== undefined) state.tokens.ttlMs = values.ttl;
  if (values.resetFormat !== undefined) state.rateFormat.reset = values.resetFormat;
  if (values.retryAfterFormat !== undefined) state.rateFormat.retryAfter = values.retryAfterFormat;
  for (const limiter of [state.keyLimiter, state.orgLimiter, state.downloadLimiter]) limiter.clear();
  return ok(limitsState(state));
}

/** Answers a control request; `sub` is the path after `/__sandbox`. Throws ApiError. */
export function handleControl(state: SandboxState, method: string, sub: string, query: URLSearchParams, raw: string): SandboxResponse {
  const route = `${method} ${sub}`;
  switch (route) {
    case 'GET /requests': {
      const since = query.get('since') ?? '0';
      if (!/^\d+$/.test(since))
        throw new ApiError(422, 'INVALID_PARAMETER', 'since must be a non-negative integer', [{ field: 'since', issue: 'invalid' }]);
      return ok(state.log.since(Number(since)));
    }
    case 'GET /faults':
      return ok(faultsState(state));
    case 'POST /faults':
      return setFaults(state, objectBody(raw));
    case 'GET /limits':
      return ok(limitsState(state));
    case 'POST /limits':
      return setLimits(state, objectBody(raw));
    case 'POST /forget-idempotency':
      state.idempotency.clear();
      return ok({ forgotten: true });
    case 'POST /reset':
      state.reset();
      return ok({ reset: true, seed: state.seed ?? null });
    case 'GET /stats':
      return ok({
        records: Object.fromEntries(RESOURCES.map((r) => [r.name, state.store.count(r.name)])),
        requests: state.log.total,
        idempotent_replays: state.idempotency.replays,
      });
  }
  const known = ['/requests', '/faults', '/limits', '/forget-idempotency', '/reset', '/stats'];
  if (known.includes(sub)) throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${CONTROL_PREFIX}${sub}`);
  throw new ApiError(404, 'NOT_FOUND', `No such control path: ${CONTROL_PREFIX}${sub}`);
}
