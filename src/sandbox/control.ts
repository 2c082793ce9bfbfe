// The control endpoint `/__sandbox/*` (docs/sandbox.md, "Faults"): the request log (auth header values
// replaced: it never holds keys), faults, limits, forgetting idempotency keys, reset and stats. Loopback only.
import { RESOURCES } from '../api/resources.js';
import { ApiError, invalidParameter } from './responses.js';
import { compileRegex, isFaultKind, probability, validateFaultRates, type QueuedFault } from './faults.js';
import {
  LIMIT_KINDS,
  RESET_FORMATS,
  RETRY_AFTER_FORMATS,
  type LimitKind,
  type ResetFormat,
  type RetryAfterFormat,
} from './rate-limiter.js';
import type { SandboxState } from './state.js';
import type { SandboxResponse } from './types.js';
import { isPlainObject, parseJson, requireObject } from './validation.js';

export const CONTROL_PREFIX = '/__sandbox';

const SECRET_HEADERS = new Set(['authorization', 'x-service-api-key', 'cookie']);

export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? '<present>' : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const bad = (message: string) => new ApiError(422, 'VALIDATION_FAILED', message);

/** `body[name]` when `ok`, undefined when absent, else 422 `{name} must be {what}`. */
function optional(body: Record<string, unknown>, name: string, ok: (v: unknown) => boolean, what: string): unknown {
  const v = body[name];
  if (v !== undefined && !ok(v)) throw bad(`${name} must be ${what}`);
  return v;
}

const positiveInt = (v: unknown) => Number.isInteger(v) && (v as number) > 0;

function faultsState(state: SandboxState) {
  const c = state.faults.config;
  return {
    fail_rate: c.failRate,
    latency_ms: c.latencyMs,
    faults: c.rates,
    paths: c.paths?.source ?? null,
    next: state.faults.pending(),
  };
}

/** `allowed`: the values of a format; the other settings are positive integers, or whole numbers when `zero` is allowed */
type Setting = { get(): number | string; set(value: never): void; allowed?: readonly string[]; zero?: boolean };

/** The settings of `/__sandbox/limits`, by name. */
function limitSettings(s: SandboxState): Record<string, Setting> {
  const { keyLimiter: key, orgLimiter: org, downloadLimiter: download, tokens, rateFormat: format } = s;
  return {
    rate_limit: { get: () => key.limit, set: (n: number) => (key.limit = n) },
    org_rate_limit: { get: () => org.limit, set: (n: number) => (org.limit = n) },
    rate_window_ms: { get: () => key.windowMs, set: (n: number) => (key.windowMs = org.windowMs = n) },
    download_rate_limit: { get: () => download.limit, set: (n: number) => (download.limit = n) },
    download_window_ms: { get: () => download.windowMs, set: (n: number) => (download.windowMs = n) },
    // 0: every link is expired when it is issued (a test of expiry that no fast machine can win)
    transcript_ttl_ms: { get: () => tokens.ttlMs, set: (n: number) => (tokens.ttlMs = n), zero: true },
    rate_limit_kind: { get: () => key.kind, set: (v: LimitKind) => (key.kind = org.kind = v), allowed: LIMIT_KINDS },
    rate_reset_format: { get: () => format.reset, set: (v: ResetFormat) => (format.reset = v), allowed: RESET_FORMATS },
    retry_after_format: {
      get: () => format.retryAfter,
      set: (v: RetryAfterFormat) => (format.retryAfter = v),
      allowed: RETRY_AFTER_FORMATS,
    },
  };
}

function limitsState(state: SandboxState) {
  return Object.fromEntries(Object.entries(limitSettings(state)).map(([name, setting]) => [name, setting.get()]));
}

function parseQueue(value: unknown): QueuedFault[] {
  if (!Array.isArray(value)) throw bad('next must be an array');
  return value.map((item: unknown, i) => {
    if (!isPlainObject(item)) throw bad(`next[${i}] must be an object`);
    const { kind, method, path, count } = item;
    if (typeof kind !== 'string' || !isFaultKind(kind)) throw bad(`next[${i}].kind is not a fault kind`);
    if (method !== undefined && typeof method !== 'string') throw bad(`next[${i}].method must be a string`);
    if (path !== undefined && typeof path !== 'string')
      throw bad(`next[${i}].path must be a regular expression string`);
    if (count !== undefined && !positiveInt(count)) throw bad(`next[${i}].count must be a positive integer`);
    return {
      kind,
      method: method?.toUpperCase(),
      path: path === undefined ? undefined : wrap(() => compileRegex(path, `next[${i}].path`)),
      count: (count as number | undefined) ?? 1,
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

function setFaults(state: SandboxState, body: Record<string, unknown>) {
  const failRate =
    probability(optional(body, 'fail_rate', (v) => probability(v) !== undefined, 'a number from 0 to 1')) ?? 0;
  const latencyMs =
    optional(body, 'latency_ms', (v) => Number.isInteger(v) && (v as number) >= 0, 'a non-negative integer') ?? 0;
  const rates = body.faults === undefined ? {} : wrap(() => validateFaultRates(body.faults));
  if (body.paths !== undefined && body.paths !== null && typeof body.paths !== 'string')
    throw bad('paths must be a regular expression string');
  const paths = typeof body.paths === 'string' ? wrap(() => compileRegex(body.paths as string, 'paths')) : undefined;
  const next = body.next === undefined ? undefined : parseQueue(body.next);
  state.faults.config = { failRate, latencyMs: latencyMs as number, rates, paths };
  // `next` replaces the queue when given (`next: []` empties it); otherwise the queue stays.
  if (next) state.faults.queue = next;
  return faultsState(state);
}

/** Checks every given setting first, then applies them all; new limits start fresh windows. */
function setLimits(state: SandboxState, body: Record<string, unknown>) {
  const given = Object.entries(limitSettings(state)).map(([name, setting]) => {
    const { allowed, zero } = setting;
    if (allowed)
      return {
        setting,
        value: optional(body, name, (v) => allowed.includes(v as string), `one of ${allowed.join(', ')}`),
      };
    if (zero)
      return { setting, value: optional(body, name, (v) => v === 0 || positiveInt(v), 'a whole number of 0 or more') };
    return { setting, value: optional(body, name, positiveInt, 'a positive integer') };
  });
  for (const { setting, value } of given) if (value !== undefined) setting.set(value as never);
  for (const limiter of [state.keyLimiter, state.orgLimiter, state.downloadLimiter]) limiter.clear();
  return limitsState(state);
}

type Run = (state: SandboxState, body: () => Record<string, unknown>, query: URLSearchParams) => unknown;

/** Each control path, by method. */
const ROUTES: Record<string, Partial<Record<string, Run>>> = {
  '/requests': {
    GET: (state, _body, query) => {
      const since = query.get('since') ?? '0';
      if (!/^\d+$/.test(since)) throw invalidParameter('since', 'since must be a non-negative integer');
      return state.log.since(Number(since));
    },
  },
  '/faults': { GET: faultsState, POST: (state, body) => setFaults(state, body()) },
  '/limits': { GET: limitsState, POST: (state, body) => setLimits(state, body()) },
  '/forget-idempotency': { POST: (state) => (state.idempotency.clear(), { forgotten: true }) },
  '/reset': { POST: (state) => (state.reset(), { reset: true, seed: state.seed ?? null }) },
  '/stats': {
    GET: (state) => ({
      records: Object.fromEntries(RESOURCES.map((r) => [r.name, state.store.count(r.name)])),
      requests: state.log.total,
      idempotent_replays: state.idempotency.replays,
    }),
  },
};

/** Answers a control request; `sub` is the path after `/__sandbox`. Throws ApiError. */
export function handleControl(
  state: SandboxState,
  method: string,
  sub: string,
  query: URLSearchParams,
  raw: string,
): SandboxResponse {
  const routes = Object.hasOwn(ROUTES, sub) ? ROUTES[sub]! : undefined;
  if (!routes) throw new ApiError(404, 'NOT_FOUND', `No such control path: ${CONTROL_PREFIX}${sub}`);
  const run = Object.hasOwn(routes, method) ? routes[method] : undefined;
  if (!run) throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${method} is not allowed on ${CONTROL_PREFIX}${sub}`);
  return {
    status: 200,
    headers: {},
    body: run(state, () => requireObject(raw.trim() === '' ? {} : parseJson(raw)), query),
  };
}
