// A request to the sandbox with its admin key, numbers kept exactly: the answer's `data` (a failure throws, naming it).
import { parseJson, stringifyJson } from '../../src/json/exact-json.js';
import type { TestSandbox } from './sandbox.js';

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
