// Error text for standard error (CONTRACT §3): `Error: MESSAGE (HTTP 404 NOT_FOUND, request req_…)`,
// one line per detail, the hint; with `-o json` also one JSON object line. Server text is sanitised.
import { isCrmError } from '../http/errors.js';
import { safeJson, sanitizeForTerminal } from './sanitize.js';

/** Details shown on the terminal; the rest are counted (all of them in -o json). */
const DETAILS_SHOWN = 10;

const clean = (s: string): string => sanitizeForTerminal(s);
const cleanMultiline = (s: string): string => sanitizeForTerminal(s, { keepNewlines: true });

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

function text(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(String).join('.'); // a path like ["address", "city"]
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects are stringified as JSON
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** One detail as `field: issue`: the spec shows no detail shape, so the usual names are tried, else JSON. */
export function formatDetail(detail: Record<string, unknown>): string {
  const field = text(detail.field ?? detail.path ?? detail.param ?? detail.name ?? detail.column);
  const message = text(detail.message ?? detail.issue ?? detail.reason ?? detail.error);
  const code = text(detail.code);
  const issue =
    message !== undefined && code !== undefined && code !== message ? `${message} (${code})` : (message ?? code);
  if (issue === undefined) return clean(JSON.stringify(detail) ?? '');
  return clean(field !== undefined ? `${field}: ${issue}` : issue);
}

/** `(HTTP 404 NOT_FOUND, request req_123)`, or the parts there are; '' when none. */
function suffix(status?: number, code?: string, requestId?: string): string {
  const head = [status === undefined ? '' : `HTTP ${status}`, code ?? ''].filter(Boolean).join(' ');
  const parts = [head, requestId ? `request ${requestId}` : ''].filter(Boolean);
  return parts.length > 0 ? ` (${clean(parts.join(', '))})` : '';
}

/** Codes of errors crm raises itself (no server answer carried one), so scripts can tell them apart. */
const LOCAL_CODES: Readonly<Record<number, string>> = { 2: 'USAGE_ERROR', 9: 'PARTIAL_FAILURE', 130: 'INTERRUPTED' };

/** The JSON object of `-o json` (raw values; safeJson makes the text safe); `exit_code` goes beyond the contract's keys. */
export function errorToJson(err: unknown) {
  if (isCrmError(err)) {
    const code = err.code ?? (err.status === undefined ? LOCAL_CODES[err.exitCode] : undefined) ?? null;
    return {
      error: { code, message: err.message, details: err.details },
      status: err.status ?? null,
      request_id: err.requestId ?? null,
      exit_code: err.exitCode,
    };
  }
  return {
    error: { code: 'UNEXPECTED_ERROR', message: messageOf(err), details: [] },
    status: null,
    request_id: null,
    exit_code: 1,
  };
}

/** The text for standard error: the error line, its details, its hint; with `json` also one JSON object line. */
export function formatError(err: unknown, opts: { json?: boolean } = {}): string {
  const lines: string[] = [];
  if (isCrmError(err)) {
    lines.push(`Error: ${cleanMultiline(err.message)}${suffix(err.status, err.code, err.requestId)}`);
    // a server may send 100 000 details: a few say what is wrong, -o json carries them all
    for (const d of err.details.slice(0, DETAILS_SHOWN)) lines.push(`  - ${formatDetail(d)}`);
    const more = err.details.length - DETAILS_SHOWN;
    if (more > 0) lines.push(`  … and ${more} more (see -o json)`);
    if (err.hint) lines.push(`Hint: ${cleanMultiline(err.hint)}`);
  } else {
    lines.push(`Error: ${cleanMultiline(messageOf(err))}`);
  }
  if (opts.json) lines.push(errorJsonLine(err));
  return `${lines.join('\n')}\n`;
}

/** The error as one JSON object line (`-o json`), after its text. */
export const errorJsonLine = (err: unknown): string => safeJson(errorToJson(err));
