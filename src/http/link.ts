// One GET of an expiring link the API handed out (spec: Recording.transcript_url), through the same
// attempt and transport as API requests. Its token is the credential: no key, no cookie, used as
// given, no redirects. One attempt: a retry needs a fresh link, so the caller runs the retry layer.
import { parseJson } from '../json/exact-json.js';
import { USER_AGENT } from '../version.js';
import { type Core, networkError, pacedAttempt, redirectError } from './attempt.js';
import { checkResponse, quoteBody } from './envelope-check.js';
import { type CrmError, RateLimitError, ServerError } from './errors.js';
import type { Failure, LinkAnswer, LinkOptions, Tried } from './types.js';
import { isLoopbackHost } from './url.js';

/** The largest transcript crm reads (README, "Limits"): one JSON document held whole in memory. */
export const MAX_TRANSCRIPT_BYTES = 128 * 1024 * 1024;

export async function getLink(core: Core, link: string, opts: LinkOptions): Promise<Tried<LinkAnswer>> {
  const fail = (error: CrmError, extra: Omit<Failure, 'error'> = {}): Tried<LinkAnswer> => ({
    ok: false,
    failure: { error: core.redact.error(error), ...extra },
  });
  const refusal = linkRefusal(link, opts.what, core);
  if (refusal) {
    if (opts.ticket) opts.pacer?.done(opts.ticket); // nothing was sent
    return fail(refusal);
  }
  const url = new URL(link);
  // Exactly these two headers: the token in the URL is the only credential.
  const headers = { accept: 'application/json', 'user-agent': USER_AGENT };
  const shown = `${url.origin}/… (${opts.what} link)`; // the --verbose line leaves the token out
  const { pacer, ticket, stop, signal } = opts;
  const maxBodyBytes = opts.maxBytes ?? MAX_TRANSCRIPT_BYTES;
  const outcome = await pacedAttempt(
    core,
    { method: 'GET', url, shown, headers, maxBodyBytes, pacer, ticket, stop, signal },
    0,
  );
  if (outcome.kind === 'network') {
    const tooLarge = outcome.code === 'BODY_TOO_LARGE';
    const error = tooLarge
      ? new ServerError(`the ${opts.what} is too large: ${(outcome.error as Error).message}`, { code: outcome.code })
      : networkError(outcome, url, core.timeoutMs, `${opts.what} download from ${url.host}`, true);
    return fail(error, { errorCode: outcome.code });
  }
  const { status, headers: got, text } = outcome.raw;
  if (status === 404 || status === 410) return { ok: true, value: { gone: status } };
  if (status >= 300 && status < 400) return fail(redirectError(outcome.raw, `the ${opts.what} link`), { status });
  const retryAfter = got['retry-after'];
  const serverDate = got.date;
  if (status === 429)
    return fail(new RateLimitError(`the ${opts.what} download was rate limited (HTTP 429)`, { status }), {
      status,
      retryAfter,
      serverDate,
    });
  if (status < 200 || status >= 300) {
    const checked = checkResponse(status, text, 'v2', undefined, (t) => core.redact.text(t));
    const error = (checked as { error: CrmError }).error;
    error.message = `${opts.what} download failed: ${error.message}`;
    return fail(error, { status, retryAfter, serverDate });
  }
  const body = parseDocument(text, opts.what, (t) => core.redact.text(t));
  if (typeof body === 'string')
    return fail(new ServerError(body, { status, code: 'TRUNCATED_BODY' }), { status, errorCode: 'TRUNCATED_BODY' });
  return { ok: true, value: { body: core.redact.value<object>(body) } };
}

/** Why a link is refused before anything is sent. */
function linkRefusal(link: string, what: string, core: Core): CrmError | undefined {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return new ServerError(`the server gave a ${what} link that is not a URL: ${JSON.stringify(link.slice(0, 200))}`);
  }
  if (url.username !== '' || url.password !== '') {
    return new ServerError(`the server gave a ${what} link with credentials in it; refusing to use it`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    return new ServerError(
      `the server gave a ${what} link that is not https (${url.protocol}//${url.host}); refusing to fetch it`,
    );
  }
  try {
    core.transport.route(url.origin);
  } catch (err) {
    return err as CrmError; // a malformed HTTPS_PROXY: a usage error
  }
  return undefined;
}

/** A parsed JSON object or array, or why the text is not one (quoted with the keys masked before the cut). */
export function parseDocument(
  text: string,
  what: string,
  redact: (text: string) => string = (t) => t,
): object | string {
  const quote = (): string => JSON.stringify(quoteBody(redact(text.slice(0, 4096))));
  let value: unknown;
  try {
    value = parseJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text); // a BOM is not JSON's
  } catch {
    return `the ${what} is not valid JSON (truncated?): ${quote()}`;
  }
  if (value === null || typeof value !== 'object') return `the ${what} is not a JSON object or array: ${quote()}`;
  return value;
}
