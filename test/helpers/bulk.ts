// For the end-to-end tests of `crm batch --update/--delete` and `crm links import/add --file` (issue 12):
// records made straight through the API, the sandbox's request log read per record or per Idempotency-Key
// (how many times a PATCH, DELETE or link POST was applied, replays and faults before the write not
// counted), and a run killed after the server has seen N of its requests.
import type { ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import { collect, startCrm, type CrmResult } from './run-crm.js';
import type { TestSandbox } from './sandbox.js';

export interface LogEntry {
  index: number;
  method: string;
  path: string;
  status: number;
  fault: string | null;
  replayed: boolean;
  /** the handler ran and answered 2xx: the write happened (docs/sandbox.md, "Faults") */
  applied: boolean;
  headers: Record<string, string>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates `n` contacts `tag.i@example.com` (one batch request per 100) with the admin key; their ids, in order. */
export async function makeContacts(t: TestSandbox, tag: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 1; from <= n; from += 100) {
    const records = Array.from({ length: Math.min(100, n - from + 1) }, (_, i) => ({
      email: `${tag}.${from + i}@example.com`,
      first_name: 'Before',
    }));
    const res = await fetch(`${t.sb.baseUrl}/contacts/batch`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
      body: JSON.stringify(records),
    });
    const body = (await res.json()) as { data: { items: Array<{ data: { id: string } }> } };
    ids.push(...body.data.items.map((i) => i.data.id));
  }
  return ids;
}

/** The record as the API has it now, or undefined when it is gone (404). */
export async function getRecord(
  t: TestSandbox,
  resource: string,
  id: string,
): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${t.sb.baseUrl}/${resource}/${id}`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
  const body = (await res.json()) as { data: Record<string, unknown> };
  if (res.status === 404) return undefined;
  expect(res.status).toBe(200);
  return body.data;
}

/** The request log of the API listener from index `since`. */
export async function requestLog(t: TestSandbox, since = 0): Promise<LogEntry[]> {
  const all = (await t.control(`/requests?since=${since}`)) as Array<LogEntry & { listener: string }>;
  return all.filter((e) => e.listener === 'api');
}

export const logLength = async (t: TestSandbox): Promise<number> => {
  const all = (await t.control('/requests')) as LogEntry[];
  return all.length === 0 ? 0 : all[all.length - 1]!.index + 1;
};

/** A request the server carried out: its handler answered 2xx (not replayed), whether or not an after-write fault hid the answer. */
export const applied = (e: LogEntry): boolean => e.applied;

/** id → how many times a `method` on `/resource/id` was applied, over the log entries given. */
export function appliedPerId(log: LogEntry[], method: string, resource: string): Map<string, number> {
  const counts = new Map<string, number>();
  const re = new RegExp(`/${resource}/([^/?]+)$`);
  for (const e of log) {
    const id = e.method === method && applied(e) ? re.exec(e.path)?.[1] : undefined;
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/** Idempotency-Key → how many times a `method` request carrying it was applied (requests without a key under ''), over the entries given. */
export function appliedPerKey(log: LogEntry[], method: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of log.filter((e) => e.method === method)) {
    const key = e.headers['idempotency-key'] ?? '';
    counts.set(key, (counts.get(key) ?? 0) + (applied(e) ? 1 : 0));
  }
  return counts;
}

/** The ids of the records a GET of `path` lists (first page of 100), with the admin key. */
export async function listIds(t: TestSandbox, path: string): Promise<string[]> {
  const res = await fetch(`${t.sb.baseUrl}${path}?limit=100`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Array<{ id: string }> }).data.map((r) => r.id);
}

/** The ids of every record a GET of `path` lists, page after page, with the admin key. */
export async function allIds(t: TestSandbox, path: string): Promise<string[]> {
  const ids: string[] = [];
  for (let cursor: string | undefined; ;) {
    const url = `${t.sb.baseUrl}${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await fetch(url, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
    expect(res.status).toBe(200);
    const page = (await res.json()) as {
      data: Array<{ id: string }>;
      page_info?: { end_cursor?: string; has_next_page?: boolean };
    };
    ids.push(...page.data.map((r) => r.id));
    if (!page.page_info?.has_next_page) return ids;
    cursor = page.page_info.end_cursor;
  }
}

/** The ids a `method` on `/resource/id` was sent for (any answer), in the entries given. */
export function sentIds(log: LogEntry[], method: string, resource: string): string[] {
  const re = new RegExp(`/${resource}/([^/?]+)$`);
  return log.flatMap((e) => (e.method === method ? (re.exec(e.path)?.[1] ?? []) : []));
}

/** Starts crm and sends `signal` once the server has seen `after` requests of `method` (log entries from `since`). */
export async function stopAfter(
  t: TestSandbox,
  args: string[],
  opts: {
    env: Record<string, string | undefined>;
    cwd?: string;
    method: string;
    after: number;
    since: number;
    signal: NodeJS.Signals;
    /** piped to its standard input */
    input?: string;
  },
): Promise<CrmResult & { child: ChildProcess }> {
  const child = startCrm(args, { env: opts.env, cwd: opts.cwd });
  const done = collect(child, { timeoutMs: 60_000, input: opts.input });
  let exited = false;
  void done.finally(() => (exited = true)).catch(() => undefined);
  for (let i = 0; i < 2000 && !exited; i++) {
    const seen = (await requestLog(t, opts.since)).filter((e) => e.method === opts.method).length;
    if (seen >= opts.after) break;
    await sleep(5);
  }
  child.kill(opts.signal);
  return { ...(await done), child };
}

/** A small deterministic PRNG (mulberry32) for the kill points of a seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** The faults of the update and delete fault tests, on rows 1, 3, …, 11: before and after the write, dropped connections, 429s. */
export function rowFaults(method: string, at: (i: number) => string): Array<Record<string, unknown>> {
  const kinds = ['500', '500-after-write', 'drop', 'drop-after-write', '429', '500-after-write'];
  return kinds.map((kind, k) => ({ kind, method, path: at(2 * k + 1), ...(kind === '429' ? { count: 2 } : {}) }));
}
