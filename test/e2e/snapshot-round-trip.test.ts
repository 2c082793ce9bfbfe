// Issue 19's round trip: `crm snapshot DIR` of a seeded sandbox, then `crm sandbox --from DIR` serves the same
// records — every collection snapshotted is listed by the second sandbox exactly as by the first, field by field.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LINK_KINDS } from '../../src/api/snapshot-links.js';
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
    const res = await fetch(`${baseUrl}/${resource}?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': key },
    });
    const body = (await res.json()) as {
      data: unknown[];
      page_info: { end_cursor: string | null; has_next_page: boolean };
    };
    out.push(...body.data);
    if (!body.page_info.has_next_page) return out;
    cursor = body.page_info.end_cursor;
  }
}

it('a snapshot served by crm sandbox --from lists the same records as the original, field by field', async () => {
  const folder = join(dir, 'backup');
  const r = await runCrm(['snapshot', folder, '--resources', 'contacts,companies,deals,notes'], {
    env: t.env('admin'),
    timeoutMs: 120_000,
  });
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

it('with --links: the copy lists the same links and meeting associations, and a snapshot of the copy has the same link files', async () => {
  const folder = join(dir, 'with-links');
  const r = await runCrm(['snapshot', folder, '--links'], { env: t.env('admin'), timeoutMs: 120_000 });
  expect(r.code, r.stderr).toBe(0);
  let copy: SandboxProcess | undefined;
  try {
    copy = await startSandboxProcess(['--port', '0', '--from', folder]);
    const get = async (baseUrl: string, key: string, path: string) =>
      (
        (await (await fetch(`${baseUrl}${path}`, { headers: { 'X-Service-Api-Key': key } })).json()) as {
          data: unknown;
        }
      ).data;
    let compared = 0;
    for (const kind of LINK_KINDS) {
      for (const parent of (await listAll(t.sb.baseUrl, t.sb.keys.admin, kind.parent)) as Array<{ id: string }>) {
        const path = `/${kind.parent}/${parent.id}/${kind.relation}`;
        const original = kind.association
          ? await get(t.sb.baseUrl, t.sb.keys.admin, path)
          : await listAll(t.sb.baseUrl, t.sb.keys.admin, path.slice(1));
        const served = kind.association
          ? await get(copy.baseUrl, copy.admin, path)
          : await listAll(copy.baseUrl, copy.admin, path.slice(1));
        expect(served, path).toEqual(original);
        if (original !== null && (!Array.isArray(original) || original.length > 0)) compared++;
      }
    }
    expect(compared).toBeGreaterThan(20);
    // snapshot → sandbox --from → snapshot again: the same link files, byte for byte
    const again = join(dir, 'again');
    const r2 = await runCrm(['snapshot', again, '--links'], {
      env: { ...t.env('admin'), CRM_BASE_URL: copy.baseUrl, CRM_API_KEY: copy.admin },
      timeoutMs: 120_000,
    });
    expect(r2.code, r2.stderr).toBe(0);
    for (const kind of LINK_KINDS) {
      const file = `links/${kind.key}.ndjson`;
      expect(readFileSync(join(again, file), 'utf8'), file).toBe(readFileSync(join(folder, file), 'utf8'));
    }
  } finally {
    await copy?.stop();
  }
}, 180_000);
