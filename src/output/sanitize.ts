// Server text made safe for a terminal: control and bidi characters shown escaped, never raw (kubectl
// CVE-2021-25743). Every path to a terminal goes through sanitizeForTerminal or safeJson.
import { stringifyJson } from '../json/exact-json.js';

/** keepNewlines: keep LF (CRLF becomes LF) for multi-line messages; keepTabs: keep tabs. Else both are escaped. */
type SanitizeOptions = { keepNewlines?: boolean; keepTabs?: boolean };

// C0, DEL, C1, the bidi controls ("Trojan Source") and U+2028/U+2029 (line breaks to some terminals).
// JSON.stringify escapes C0 itself, so JSON text needs only the rest.
const BEYOND_C0 = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const UNSAFE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'g');
const UNSAFE_TEST = new RegExp(UNSAFE.source);

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One readable escape: `\n`, `\r`, `\t`, else `\xHH` up to U+00FF (ESC is `\x1b`), `\uHHHH` above. */
export function escapeChar(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.codePointAt(0) ?? 0;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `s` with every unsafe character escaped; backslashes are kept (Windows paths stay readable). */
export function sanitizeForTerminal(s: string, opts: SanitizeOptions = {}): string {
  if (!UNSAFE_TEST.test(s)) return s; // the common case: no allocation
  let text = s;
  if (opts.keepNewlines) text = text.replace(/\r\n/g, '\n');
  return text.replace(UNSAFE, (ch) => {
    if (ch === '\n' && opts.keepNewlines) return ch;
    if (ch === '\t' && opts.keepTabs) return ch;
    return escapeChar(ch);
  });
}

// JSON.stringify escapes C0 but leaves DEL, C1 and bidi controls raw; \uXXXX keeps the JSON equal.
const JSON_UNSAFE = new RegExp(`[${BEYOND_C0}]`, 'g');

/** Escapes, inside already-serialised JSON text, what JSON.stringify leaves raw: same value, safe bytes. */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(JSON_UNSAFE, (ch) => `\\u${(ch.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

/** A JSON text for `value`, safe to print: `undefined` becomes `null`; exact numbers (RawNumber) as sent. */
export function safeJson(value: unknown, indent?: number): string {
  const json = stringifyJson(value === undefined ? null : value, indent);
  return escapeJsonForTerminal(json ?? 'null');
}
