// Makes server-provided text safe to print on a terminal: control characters and bidi overrides
// are shown escaped, never sent raw (the bug class of kubectl CVE-2021-25743 and gh's asciisanitizer).
// The one home of "unsafe on a terminal": every path to a terminal (tables, errors, hints, progress,
// --verbose, `crm api`) goes through sanitizeForTerminal or safeJson. Data to a pipe stays exact.
import { stringifyJson } from '../json/exact-json.js';

export interface SanitizeOptions {
  /** keep line feeds (and turn CRLF into LF) for multi-line messages; default false: `\n` is shown escaped */
  keepNewlines?: boolean;
  /** keep horizontal tabs; default false: `\t` is shown escaped */
  keepTabs?: boolean;
}

// C0 controls, DEL, C1 controls, the Unicode bidi controls (embeddings/overrides U+202A–U+202E,
// isolates U+2066–U+2069, marks U+200E/U+200F/U+061C: the "Trojan Source" set) and the line and
// paragraph separators U+2028/U+2029, which some terminals and editors treat as line breaks.
// JSON.stringify escapes C0 itself, so JSON text needs only the rest.
const BEYOND_C0 = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const UNSAFE = new RegExp(`[\\u0000-\\u001f${BEYOND_C0}]`, 'g');
const UNSAFE_TEST = new RegExp(UNSAFE.source);

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * One readable escape for an unsafe character: `\n`, `\r`, `\t` for the three common ones,
 * `\xHH` for other C0/DEL/C1 (so ESC is `\x1b`, 8-bit CSI is `\x9b`), `\uHHHH` above U+00FF.
 */
export function escapeChar(ch: string): string {
  const named = NAMED[ch];
  if (named !== undefined) return named;
  const code = ch.codePointAt(0) ?? 0;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Returns `s` with every control character, DEL, C1 control and bidi control replaced by a visible
 * escape. Backslashes are left as they are (Windows paths stay readable), so a literal `\x1b` typed
 * by a user looks like an escaped ESC: harmless, since it is text either way.
 */
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
