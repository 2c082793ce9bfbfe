// A raw answer → the checked envelope (zod) or the error it stands for (CONTRACT §3–4); anything
// not understood (HTML from a proxy, truncated JSON) → a ServerError quoting the body's start.
import type * as z from 'zod/mini';
import {
  batchEnvelope,
  errorEnvelope,
  listEnvelope,
  successEnvelope,
  v1ErrorEnvelope,
  v1SuccessEnvelope,
  v2Envelope,
} from '../api/envelopes.js';
import { parseJson } from '../json/exact-json.js';
import { type CrmError, RateLimitError, ServerError, errorClassForStatus } from './errors.js';
import type { Expect } from './types.js';

const SCHEMAS: Record<Expect, z.ZodMiniType> = {
  success: successEnvelope,
  list: listEnvelope,
  batch: batchEnvelope,
  v2: v2Envelope,
  v1: v1SuccessEnvelope,
};

/** The first 200 characters of a body on one line (escaping is src/output/sanitize.ts's, where printed). */
export function quoteBody(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

export type Checked =
  | { ok: true; body: unknown; requestId?: string }
  /** truncated: a 2xx whose body was cut off, transient, may be retried like a reset */
  | { ok: false; error: CrmError; truncated: boolean };

/** Checks one answer; `redact` masks keys in a body before it is quoted (before the cut). */
export function checkResponse(
  status: number,
  text: string,
  expect: Expect,
  requestIdHeader?: string,
  redact: (text: string) => string = (t) => t,
): Checked {
  const fail = (error: CrmError): Checked => ({ ok: false, error, truncated: false });
  const notEnvelope = (why: string, requestId = requestIdHeader): CrmError => {
    const quoted = quoteBody(redact(text));
    const message = `unexpected response from the server (HTTP ${status}, ${why}): ${quoted === '' ? '(empty body)' : quoted}`;
    // A 429 stays a rate limit whatever its body, so that retries and the exit code still fit.
    const Cls = status === 429 ? RateLimitError : ServerError;
    return new Cls(message, { status, requestId, code: status === 429 ? 'RATE_LIMITED' : 'INVALID_RESPONSE' });
  };
  let value: unknown;
  try {
    value = parseJson(text); // numbers a double cannot hold stay exact
  } catch {
    const error = notEnvelope(text.trim() === '' ? 'empty body' : 'not JSON');
    return { ok: false, error, truncated: status >= 200 && status < 300 };
  }
  const meta = (value as { meta?: { request_id?: unknown } } | null)?.meta;
  const requestId = typeof meta?.request_id === 'string' ? meta.request_id : requestIdHeader;
  // An error envelope (on a 2xx still an error: ServerError), or a 4xx/5xx body that is not the spec's
  // envelope but still explains the error: the status picks the class, the message is shown.
  // each envelope only where its literal is (a failed safeParse builds its issues: ~30 µs a list page, for nothing)
  const tagged = isObject(value) ? value : {};
  const err =
    (tagged.object === 'error' ? errorEnvelope.safeParse(value).data?.error : undefined) ??
    (tagged.success === false ? v1ErrorEnvelope.safeParse(value).data?.error : undefined) ??
    (status >= 400 ? looseErrorBody(value) : undefined);
  const Cls = status >= 400 ? errorClassForStatus(status) : ServerError;
  if (err)
    return fail(
      new Cls(err.message, {
        status,
        code: err.code,
        requestId,
        details: err.details ?? [],
        hint: STATUS_HINTS[status],
      }),
    );
  if (status >= 300) return fail(notEnvelope('not an error envelope', requestId));
  // a batch answer (an import's every request) in the common shape passes without zod; anything else is zod's to judge
  if (expect === 'batch' && isPlainBatch(value)) return { ok: true, body: value, requestId };
  // …and a list page (every read of a collection: 10,000 pages for a million records) in the common shape
  if (expect === 'list' && isPlainList(value)) return { ok: true, body: value, requestId };
  const checked = SCHEMAS[expect].safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'shape';
    return fail(notEnvelope(`not a ${expect} envelope; ${where}`, requestId));
  }
  // the body as sent (zod would strip fields the schema does not name; `crm api` prints them all)
  return { ok: true, body: value, requestId };
}

/** The next step after an API error, by status: which key, which scope, which URL. */
const STATUS_HINTS: Partial<Record<number, string>> = {
  401: '`crm keys-check` shows which key and profile are used; save another with `crm keys add NAME` or set CRM_API_KEY',
  403: 'the key lacks a scope or access to this record (the details name the scope); use a key that has it (`crm keys-check`)',
  404: 'if the id is right, check the base URL: it ends in /api/v2 (`crm keys-check` tests it)',
};

// The error inside a 4xx/5xx JSON body that is not quite the spec's envelope: with a message, its
// status picks the exit code and the message is shown; without one it stays exit 8, quoted.
type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where servers put the human text, most specific first (RFC 9457 `detail`/`title`, OAuth, others). */
const MESSAGE_KEYS = ['message', 'detail', 'error_description', 'title', 'msg', 'description'] as const;

const firstString = (o: Obj, keys: readonly string[]): string | undefined =>
  keys.map((k) => o[k]).find((v): v is string => typeof v === 'string' && v.trim() !== '');

function codeOf(v: unknown): string | undefined {
  if (typeof v === 'string' && v.trim() !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** `details` as the list of objects the rest of crm prints, whatever came: null, an object, strings. */
export function normaliseDetails(v: unknown): Array<Record<string, unknown>> {
  return (Array.isArray(v) ? v : [v])
    .filter((d) => d !== undefined && d !== null)
    .map((d) => (isObject(d) ? d : typeof d === 'string' ? { message: d } : { value: d }));
}

/** The error a non-conforming JSON error body carries, or undefined when it carries no message. */
export function looseErrorBody(
  value: unknown,
): { code?: string; message: string; details: Array<Record<string, unknown>> } | undefined {
  if (!isObject(value)) return undefined;
  const inner = value.error;
  const errors = Array.isArray(value.errors) ? value.errors : undefined;
  const firstOfErrors = errors && isObject(errors[0]) ? errors[0] : undefined;
  let message: string | undefined;
  let code: string | undefined;
  let details: unknown;
  if (isObject(inner)) {
    message = firstString(inner, MESSAGE_KEYS);
    code = codeOf(inner.code);
    details = inner.details ?? inner.errors;
  } else if (typeof inner === 'string' && inner.trim() !== '') {
    // `{"error": "not_found", "message": "…"}` or just `{"error": "Contact not found"}`
    message = firstString(value, MESSAGE_KEYS) ?? inner;
    if (message !== inner) code = inner;
  }
  message ??= firstString(value, MESSAGE_KEYS) ?? (firstOfErrors && firstString(firstOfErrors, MESSAGE_KEYS));
  code ??= codeOf(value.code) ?? (firstOfErrors && codeOf(firstOfErrors.code));
  details ??= value.details ?? errors;
  // An error object with a code but no text still says what went wrong.
  if (message === undefined && code !== undefined && isObject(inner)) message = code;
  if (message === undefined) return undefined;
  return { code, message, details: normaliseDetails(details) };
}

const isInt = (v: unknown, min = -Infinity): boolean => Number.isSafeInteger(v) && (v as number) >= min;

/**
 * What listEnvelope accepts, checked by hand: zod copied every record of every page (bench/links.mjs: 2.3 s of 22 s
 * CPU reading 1,000,000 contacts); false means "ask zod".
 */
export function isPlainList(v: unknown): boolean {
  if (!isObject(v) || v.object !== 'list' || !Array.isArray(v.data) || !isObject(v.page_info) || !isObject(v.meta))
    return false;
  const { meta, page_info: p } = v;
  if (![meta.api_version, meta.request_id, meta.timestamp].every((x) => typeof x === 'string')) return false;
  if (typeof p.has_next_page !== 'boolean' || (p.end_cursor !== null && typeof p.end_cursor !== 'string')) return false;
  return (v.data as unknown[]).every(isObject);
}

/** What batchEnvelope accepts, checked by hand (zod took a twentieth of an import's time); false means "ask zod". */
export function isPlainBatch(v: unknown): boolean {
  if (!isObject(v) || v.object !== 'batch' || !isObject(v.data) || !isObject(v.meta) || !Array.isArray(v.data.items))
    return false;
  const { meta, data } = v;
  const s = data.summary;
  if (![meta.api_version, meta.request_id, meta.timestamp].every((x) => typeof x === 'string')) return false;
  if (!isObject(s) || !isInt(s.total) || !isInt(s.succeeded) || !isInt(s.failed)) return false;
  for (const item of data.items as unknown[]) {
    if (!isObject(item) || !isInt(item.index, 0) || (item.status !== 'created' && item.status !== 'error'))
      return false;
    if (item.data !== undefined && !isObject(item.data)) return false;
    const e = item.error;
    if (e !== undefined && !(isObject(e) && typeof e.code === 'string' && typeof e.message === 'string')) return false;
  }
  return true;
}
