// Issue 19's round trip: `crm snapshot DIR` of a seeded sandbox, then `crm sandbox --from DIR` serves the same
// records — every collection snapshotted is listed by the second sandbox exactly as by the first, field by field.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCrm, startSandboxProcess, type SandboxProcess } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
let dir: string;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 7 });
  dir = tempDir('crm-snapshot-trip-');
});
afterAll(async () => t?.close());

/** Every record a GET of `/resource` lists, page by page. */
async function listAll(baseUrl: string, key: string, resource: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: string | null = null;
  for (;;) {
    const res = await fetch(`${baseUrl}/${resource}?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'X-Service-Api-Key': key } });
    const body = (await res.json()) as { data: unknown[]; page_info: { end_cursor: string | null; has_next_page: boolean } };
    out.push(...body.data);
    if (!body.page_info.has_next_page) return out;
    cursor = body.page_info.end_cursor;
  }
}

it('a snapshot served by crm sandbox --from lists the same records as the original, field by field', async () => {
  const folder = join(dir, 'backup');
  const r = await runCrm(['snapshot', folder, '--resources', 'contacts,companies,deals,notes'], { env: t.env('admin'), timeoutMs: 120_000 });
  expect(r.code, r.stderr).toBe(0);
  let copy: SandboxProcess | undefined;
  try {
    copy = await startSandboxProcess(['--port', '0', '--from', folder]);
    for (const resource of ['contacts', 'companies', 'deals', 'notes']) {
      const original = await listAll(t.sb.baseUrl, t.sb.keys.admin, resource);
      expect(original.length, resource).toBeGreaterThan(0);
      expect(await listAll(copy.baseUrl, copy.admin, resource), resource).toEqual(original);
    }
  } finally {
    await copy?.stop();
  }
});
