// A request to the sandbox with its admin key, numbers kept exactly: the answer's `data` (a failure throws, naming it).
import { parseJson, stringifyJson } from '../../src/json/exact-json.js';
import { startTestSandbox, type TestSandbox } from './sandbox.js';

export async function apiData(t: TestSandbox, method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method,
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: body === undefined ? undefined : stringifyJson(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return (parseJson(text) as { data: unknown }).data;
}

/** A sandbox with the limit out of the way, for tests of links by natural key; `make` creates a record and keeps its id under a tag. */
export async function linksSandbox(seed: number): Promise<{
  t: TestSandbox;
  ids: Record<string, string>;
  make: (resource: string, tag: string, body: Record<string, unknown>) => Promise<string>;
}> {
  const t = await startTestSandbox({ seed, rateLimit: 1_000_000, orgRateLimit: 1_000_000, rateWindowMs: 1000 });
  const ids: Record<string, string> = {};
  const make = async (resource: string, tag: string, body: Record<string, unknown>) =>
    (ids[tag] = ((await apiData(t, 'POST', `/${resource}`, body)) as { id: string }).id);
  return { t, ids, make };
}
