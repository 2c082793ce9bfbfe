// Issue 28 (finding 9 of the trial), end to end: `crm batch contacts FILE --match email` matches keys in any
// Unicode normalisation but compares values by their code points. A contact holding its first_name in NFD and a
// file holding it in NFC: one update, after which the CRM holds the file's NFC code points exactly; run again,
// unchanged. A key spelled in NFD in the CRM and NFC in the file still finds its record (an update, not a create).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRecord, logLength, requestLog } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
const dir = tempDir('crm-match-nfc-');
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const codePoints = (s: unknown): number[] => Array.from(String(s), (c) => c.codePointAt(0)!);

async function create(record: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${t.sb.baseUrl}/contacts`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(record),
  });
  const text = await res.text();
  expect(res.status, text).toBe(201);
  return (JSON.parse(text) as { data: { id: string } }).data.id;
}

describe('crm batch --match email: values in another normalisation', () => {
  it('an NFC first_name where the CRM holds NFD is one update that stores the NFC code points; the rerun is unchanged', async () => {
    const jose = 'Jos\u00e9';
    const zoe = 'Zo\u00eb';
    const keyNfc = 'ren\u00e9.nfc@example.com';
    const ids = [
      await create({ email: 'jose.nfc@example.com', first_name: jose.normalize('NFD') }),
      // the key in NFD in the CRM, in NFC in the file: still this record
      await create({ email: keyNfc.normalize('NFD'), first_name: zoe.normalize('NFD') }),
    ];
    expect(jose.normalize('NFD')).not.toBe(jose);
    const path = join(dir, 'people.csv');
    writeFileSync(path, `email,first_name\njose.nfc@example.com,${jose}\n${keyNfc},${zoe}\n`);
    const args = ['-o', 'json', 'batch', 'contacts', path, '--match', 'email'];

    const since = await logLength(t);
    const r = await crm(args);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ rows: 2, created: 0, updated: 2, unchanged: 0, failed: 0 });
    const writes = (await requestLog(t, since)).filter((e) => e.method !== 'GET');
    // the two PATCHes may be sent at once: which reaches the server first is not crm's to fix
    const sent = writes.map((e) => `${e.method} ${e.path}`).sort();
    expect(sent).toEqual(ids.map((id) => `PATCH /api/v2/contacts/${id}`).sort());
    // the store holds the file's code points exactly; the key, never sent, stays as the CRM spelled it
    const [a, b] = [await getRecord(t, 'contacts', ids[0]!), await getRecord(t, 'contacts', ids[1]!)];
    expect(codePoints(a!.first_name)).toEqual(codePoints(jose));
    expect(codePoints(b!.first_name)).toEqual(codePoints(zoe));
    expect(codePoints(b!.email)).toEqual(codePoints(keyNfc.normalize('NFD')));

    const again = await crm(args);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 2, created: 0, updated: 0, unchanged: 2 });
    expect((await requestLog(t, since)).filter((e) => e.method !== 'GET')).toHaveLength(2);
  });
});
