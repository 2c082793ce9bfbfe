// Keys never appear whole in output: --verbose lines, error messages and key lists show them masked,
// and whatever a server sends back (headers, error bodies, records) is masked after parsing.
import type { CrmError } from './errors.js';

const KNOWN_PREFIX = /^(service_(?:live|pk)_)(.+)$/;
/** below this many characters after the prefix, even the last 4 would give too much away */
const MIN_TAIL_TO_SHOW = 12;
const FULL_MASK = '****';
/** Shorter "keys" are not searched for: masking every `test` because CRM_API_KEY=test protects nothing. */
const MIN_REDACTED_LENGTH = 8;

/** `service_live_…f3a9`: the known prefix and the last 4 characters; anything else fully masked. */
export function maskKey(key: string | undefined | null): string {
  if (!key) return FULL_MASK;
  const m = KNOWN_PREFIX.exec(key);
  if (!m || m[2]!.length < MIN_TAIL_TO_SHOW) return FULL_MASK;
  return `${m[1]}…${m[2]!.slice(-4)}`;
}

/** Masks the configured keys in server text: strings, parsed JSON values, headers, errors. */
export interface Redactor {
  /** `text` with every occurrence of a key, literal or escaped (`\u005f`, `\x5f`, `%5F`, `\"`), masked */
  text(text: string): string;
  /** `value` with every string (object keys too) masked; plain objects and arrays are changed in place */
  value<T>(value: T): T;
  /** true when no string parsed from this JSON text can hold a key (none literal, no `\\` or `%` escapes): value() would change nothing */
  holdsNone(text: string): boolean;
  /** a copy of `headers` with every value masked */
  headers(headers: Record<string, string>): Record<string, string>;
  /** `err` with its server-given text masked in place: message, code, request id, details, hint */
  error<E extends CrmError>(err: E): E;
}

const NO_KEYS: Redactor = {
  text: (t) => t,
  value: (v) => v,
  holdsNone: () => true,
  headers: (h) => h,
  error: (e) => e,
};

const escapeRegExp = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** One character of a key as it may be written: itself, `\u00XX`, `\xXX`, `%XX`, or `\c` for `"`, `\`, `/`. */
function charPattern(ch: string): string {
  const literal = escapeRegExp(ch);
  const hex = ch
    .charCodeAt(0)
    .toString(16)
    .padStart(2, '0')
    .replace(/[a-f]/g, (d) => `[${d}${d.toUpperCase()}]`);
  const alts = [literal, `\\\\u00${hex}`, `\\\\x${hex}`, `%${hex}`];
  if (ch === '"' || ch === '\\' || ch === '/') alts.push(`\\\\${literal}`);
  return `(?:${alts.join('|')})`;
}

/** The key, its mask, and the key with any of its characters escaped as JSON, C or URL text writes it. */
function patternFor(key: string): { key: string; mask: string; escaped: RegExp } {
  // keys are printable ASCII (key-kind.ts); anything else is matched literally only
  const escapable = /^[\x20-\x7e]+$/.test(key);
  const source = escapable ? Array.from(key, charPattern).join('') : escapeRegExp(key);
  return { key, mask: maskKey(key), escaped: new RegExp(source, 'g') };
}

/**
 * A redactor for `keys` (the configured v2 and v1 keys; empty and short ones ignored). Cheap on the
 * hot path: a string is searched with `includes` per key, and with the escape-aware pattern only
 * when it holds a `\` or `%`, so a page of ordinary records costs a few substring checks per string.
 */
export function keyRedactor(keys: ReadonlyArray<string | undefined | null>): Redactor {
  const patterns = [...new Set(keys)]
    .filter((k): k is string => typeof k === 'string' && k.length >= MIN_REDACTED_LENGTH)
    .map(patternFor);
  if (patterns.length === 0) return NO_KEYS;

  const text = (s: string): string => {
    let out = s;
    for (const p of patterns) if (out.includes(p.key)) out = out.split(p.key).join(p.mask);
    if (out.includes('\\') || out.includes('%')) {
      for (const p of patterns) out = out.replace(p.escaped, () => p.mask); // a function: a mask may hold `$&`
    }
    return out;
  };

  const value = <T>(v: T): T => {
    if (typeof v === 'string') return text(v) as T;
    if (Array.isArray(v)) {
      v.forEach((item: unknown, i) => (v[i] = value(item)));
      return v;
    }
    if (typeof v !== 'object' || v === null || !isPlain(v)) return v; // numbers, booleans, null, other classes (exact big numbers)
    const obj = v as Record<string, unknown>;
    for (const k of Object.keys(obj)) obj[k] = value(obj[k]);
    if (Object.keys(obj).every((k) => text(k) === k)) return v;
    // a key in a field name: rebuild in field order; defineProperty keeps a `__proto__` field a field, as JSON.parse made it
    const out = {};
    for (const [k, val] of Object.entries(obj)) {
      Object.defineProperty(out, text(k), { value: val, enumerable: true, writable: true, configurable: true });
    }
    return out as T;
  };

  const headers = (h: Record<string, string>): Record<string, string> =>
    Object.fromEntries(Object.entries(h).map(([k, v]) => [k, typeof v === 'string' ? text(v) : v]));

  const error = <E extends CrmError>(err: E): E =>
    Object.assign(err, {
      message: text(err.message),
      code: err.code === undefined ? undefined : text(err.code),
      requestId: err.requestId === undefined ? undefined : text(err.requestId),
      details: value(err.details),
      hint: err.hint === undefined ? undefined : text(err.hint),
    });

  const holdsNone = (s: string): boolean =>
    !s.includes('\\') && !s.includes('%') && patterns.every((p) => !s.includes(p.key));

  return { text, value, holdsNone, headers, error };
}

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}
