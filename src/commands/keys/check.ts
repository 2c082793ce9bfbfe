// `crm keys-check`: does the active key authenticate, and what may it read? Only reads are sent:
// `GET /{collection}?limit=1` per readable collection (2xx: scope there, 403: not), or for a version 1
// key `POST /people/query {limit: 1}`. Write/delete scopes are named as not checked. A key is never
// reported as working unless some probe got an answer of the API (2xx, 403 or 401).
import { allScopes, RESOURCES, scopeFor } from '../../api/resources.js';
import { keyKind, type KeyKind } from '../../config/key-kind.js';
import {
  AuthError,
  CrmError,
  ForbiddenError,
  InterruptedError,
  NotFoundError,
  ServerError,
} from '../../http/errors.js';
import { maskKey } from '../../http/mask.js';
import type { ApiResponse, HttpClient } from '../../http/types.js';
import { writeRecord } from '../../output/writers.js';
import { forEachLimit } from '../../util/pool.js';
import type { Ctx } from '../context.js';
import type { KeysCheckOptions } from './command.js';

/** `reset` as the server sent it (the sandbox: seconds until the window resets) */
type RateLimitSeen = { limit: number | null; remaining: number | null; reset: number | null };

interface KeysCheckReport {
  profile: string | null;
  base_url: string;
  key_kind: KeyKind;
  key: string;
  authenticated: boolean;
  /** `contacts:read` → true (2xx), false (403), null (could not tell: 404, 5xx, …) */
  scopes: Record<string, boolean | null>;
  /** version 2: the write and delete scopes, and a note saying why they were not checked */
  scopes_not_checked?: string[];
  note?: string;
  rate_limit: RateLimitSeen;
  /** probes that could not tell, with why (left out when there are none) */
  errors?: Record<string, string>;
}

const NOT_CHECKED_NOTE =
  'Only read scopes were checked (GET ?limit=1). Write and delete scopes cannot be checked without creating or deleting data: the first write tells (exit 4 when the scope is missing).';

export async function keysCheck(opts: KeysCheckOptions, ctx: Ctx): Promise<void> {
  const profile = await ctx.profile();
  // The kind comes from the key's form (CONTRACT §2): a version 1 key in the v2 slot is checked as one.
  const v1InV2Slot = !opts.v1 && profile.apiKey !== undefined && keyKind(profile.apiKey) === 'v1';
  const useV1 = opts.v1 === true || v1InV2Slot || (profile.apiKey === undefined && profile.v1ApiKey !== undefined);
  const client = await ctx.client({ v1: useV1, key: v1InV2Slot ? profile.apiKey : undefined });
  const key = (v1InV2Slot ? profile.apiKey : useV1 ? profile.v1ApiKey : profile.apiKey) ?? '';
  const report: KeysCheckReport = {
    profile: profile.name ?? null,
    base_url: client.baseUrl,
    key_kind: keyKind(key),
    key: maskKey(key),
    authenticated: false,
    scopes: {},
    rate_limit: { limit: null, remaining: null, reset: null },
  };
  const rejection = useV1 ? await probeV1(client, report, ctx.signal) : await probeV2(client, report, ctx.signal);
  if (!useV1 && rejection === undefined && !report.authenticated) throw notTheApi(report);

  await printReport(ctx, report, useV1);
  if (!report.authenticated) {
    throw new AuthError(`The ${useV1 ? 'version 1 ' : ''}key ${report.key} was not accepted by ${report.base_url}.`, {
      status: rejection?.status ?? 401,
      code: rejection?.code,
      requestId: rejection?.requestId,
      details: rejection?.details,
      hint: 'Check that the key is current and belongs to this server and API version (`crm keys list`, `crm keys add`).',
    });
  }
}

/** Fills `report`; returns the 401 error when the key was rejected. */
async function probeV2(
  client: HttpClient,
  report: KeysCheckReport,
  signal?: AbortSignal,
): Promise<AuthError | undefined> {
  const collections = RESOURCES.filter((r) => r.verbs.includes('list')).map((r) => r.name);
  for (const name of collections) report.scopes[scopeFor(name, 'read')] = null;
  report.scopes_not_checked = allScopes().filter((scope) => !(scope in report.scopes));
  report.note = NOT_CHECKED_NOTE;
  let rejected: AuthError | undefined;
  // The first probe alone: a 401 or a server that cannot answer (5xx, network: exit 8) ends the
  // check after one request. A 404 or a non-API answer goes on: the end tells if any probe got through.
  const probe = async (name: string, first = false): Promise<void> => {
    const scope = scopeFor(name, 'read');
    try {
      noteRateLimit(
        report,
        await client.request({ method: 'GET', path: `/${name}`, query: { limit: 1 }, expect: 'list', signal }),
      );
      report.scopes[scope] = true;
      report.authenticated = true; // an answer of the API: the key got through
    } catch (err) {
      if (err instanceof ForbiddenError) {
        report.scopes[scope] = false;
        report.authenticated = true;
      } else if (err instanceof AuthError)
        rejected = err; // on a later probe: revoked mid-check
      else if (!(err instanceof CrmError) || err instanceof InterruptedError || (first && !notAnApiAnswer(err)))
        throw err;
      else (report.errors ??= {})[scope] = describe(err);
    }
  };
  const [first, ...rest] = collections;
  await probe(first!, true);
  const stop = (): boolean => rejected !== undefined;
  if (!rejected) await forEachLimit(rest, 4, (name) => probe(name), stop);
  if (rejected) report.authenticated = false;
  return rejected;
}

async function probeV1(
  client: HttpClient,
  report: KeysCheckReport,
  signal?: AbortSignal,
): Promise<AuthError | undefined> {
  try {
    noteRateLimit(
      report,
      await client.request({ method: 'POST', path: '/people/query', body: { limit: 1 }, expect: 'v1', signal }),
    );
    report.authenticated = true;
  } catch (err) {
    if (err instanceof AuthError) return err;
    // 403 still means the key was recognized.
    if (err instanceof ForbiddenError) report.authenticated = true;
    else throw err;
  }
  return undefined;
}

/** A 404, or a body that is not the API's envelope (code INVALID_RESPONSE), or a redirect. */
function notAnApiAnswer(err: CrmError): boolean {
  return (
    err instanceof NotFoundError ||
    (err instanceof ServerError && (err.code === 'INVALID_RESPONSE' || err.code === 'REDIRECT'))
  );
}

// No probe got an API answer: the base URL points elsewhere. Exit 8, not 3: the key was never rejected.
function notTheApi(report: KeysCheckReport): ServerError {
  const details = Object.entries(report.errors ?? {}).map(([scope, why]) => ({ field: scope, message: why }));
  return new ServerError(
    `The server at ${report.base_url} did not answer as the CRM API: no probe got an API answer, so the key ${report.key} could not be checked.`,
    {
      code: 'NOT_THE_API',
      details,
      hint: 'Check the base URL: it is the version 2 root, e.g. https://crm.example.com/api/v2 (see `crm keys list`; fix it with `crm keys add PROFILE --base-url URL`).',
    },
  );
}

function describe(err: CrmError): string {
  const status = err.status === undefined ? '' : `HTTP ${err.status}${err.code ? ` ${err.code}` : ''}: `;
  return `${status}${err.message}`;
}

/** Keeps the headers of the response that left the least remaining: the latest state of the window. */
function noteRateLimit(report: KeysCheckReport, res: ApiResponse): void {
  // as the server sent them, if numbers (the client gives header names lower-case)
  const [limit, remaining, reset] = ['limit', 'remaining', 'reset'].map((h) => {
    const n = Number(res.headers[`x-ratelimit-${h}`] ?? NaN);
    return Number.isFinite(n) ? n : null;
  });
  const seen: RateLimitSeen = { limit: limit!, remaining: remaining!, reset: reset! };
  if (seen.limit === null && seen.remaining === null && seen.reset === null) return;
  const cur = report.rate_limit.remaining;
  if (cur === null || (seen.remaining !== null && seen.remaining <= cur)) report.rate_limit = seen;
}

async function printReport(ctx: Ctx, report: KeysCheckReport, v1: boolean): Promise<void> {
  const format = ctx.format();
  const opts = { fields: ctx.globals.fields, color: ctx.globals.color };
  if (format !== 'table') return writeRecord(format, ctx.io.stdout, report, opts);
  const yesNo = (v: boolean | null): string => (v === null ? '?' : v ? 'yes' : 'no');
  const kind = report.key_kind === 'v2' ? 'version 2' : report.key_kind === 'v1' ? 'version 1' : 'unknown form';
  const row: Record<string, string> = {
    profile: report.profile ?? '(environment)',
    base_url: report.base_url,
    key: `${report.key} (${kind})`,
    authenticated: report.authenticated ? 'yes' : 'no',
  };
  if (v1) {
    if (report.authenticated) row.scopes = 'version 1 keys have full access';
  } else if (report.authenticated) {
    for (const [scope, ok] of Object.entries(report.scopes)) {
      const why = report.errors?.[scope];
      row[scope] = why ? `${yesNo(ok)} (${why})` : yesNo(ok);
    }
    row.not_checked = report.scopes_not_checked?.join(', ') ?? '';
    row.note = NOT_CHECKED_NOTE;
  }
  const rl = report.rate_limit;
  if (rl.limit !== null || rl.remaining !== null) {
    row.rate_limit = `${rl.remaining ?? '?'} of ${rl.limit ?? '?'} left${rl.reset === null ? '' : `, resets in ${rl.reset} s`}`;
  }
  await writeRecord('table', ctx.io.stdout, row, opts);
}
