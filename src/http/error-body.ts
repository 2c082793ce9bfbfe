// The error inside a 4xx/5xx JSON body that is not quite the spec's envelope: with a message, its
// status picks the exit code and the message is shown; without one it stays exit 8, quoted.

export interface ErrorBody {
  code?: string;
  message: string;
  details: Array<Record<string, unknown>>;
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Where servers put the human text, most specific first (RFC 9457 `detail`/`title`, OAuth, others). */
const MESSAGE_KEYS = ['message', 'detail', 'error_description', 'title', 'msg', 'description'] as const;

function firstString(o: Obj, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = o[k];
    if (typeof v === 'string' && v.trim() !== '') return v;
  }
  return undefined;
}

function codeOf(v: unknown): string | undefined {
  if (typeof v === 'string' && v.trim() !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** `details` as the list of objects the rest of crm prints, whatever came: null, an object, strings. */
export function normaliseDetails(v: unknown): Array<Record<string, unknown>> {
  if (v === undefined || v === null) return [];
  const items = Array.isArray(v) ? v : [v];
  return items
    .filter((d) => d !== undefined && d !== null)
    .map((d) => (isObject(d) ? d : typeof d === 'string' ? { message: d } : { value: d }));
}

/** The error a non-conforming JSON error body carries, or undefined when it carries no message. */
export function looseErrorBody(value: unknown): ErrorBody | undefined {
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
