// Issue 28, from its trial: `--update` of an unedited CSV export whose field the records hold as different
// kinds (`true` in one, `"true"` in another) sent the text `"true"` to both, so the record holding the
// boolean changed. An update does not read the row's record, so such a cell is not sent: the row is
// invalid (the rejects file says why and how to tell), the other rows go; the way it names, a reconcile
// by id, reads each record and plans nothing for the unedited export.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../src/api/envelopes.js';
import { apiData } from '../helpers/api-data.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-update-mixed-');
let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });

const api = async (method: string, path: string, body?: unknown) => (await apiData(t, method, path, body)) as ApiRecord;

describe('--update of an export whose field holds mixed kinds', () => {
  it('leaves the ambiguous rows unsent (the rejects file says how to tell), sends the rest; --match id plans nothing', async () => {
    const held = [
      { email: 'bool@mixed.test', vip: true, score: 3 },
      { email: 'text@mixed.test', vip: 'true', score: 4 },
      { email: 'gold@mixed.test', vip: 'gold', score: 5 },
    ];
    const ids: string[] = [];
    for (const r of held) ids.push(String((await api('POST', '/contacts', r)).id));
    const listed = await crm(['contacts', 'list', '--all', '-o', 'csv']);
    expect(listed.code, listed.stderr).toBe(0);
    const exported = join(dir, 'export.csv');
    writeFileSync(exported, listed.stdout);

    // the dry run reads the page the run types its cells by: it predicts the same invalid rows (it said all valid)
    const dry = await crm(['batch', 'contacts', exported, '--update', '--dry-run', '-o', 'json']);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout) as { invalid: number; first_invalid: Array<{ reason: string }> };
    expect(planned.invalid).toBe(2);
    for (const r of planned.first_invalid) expect(r.reason).toMatch(/vip "true" may be a boolean or text/);
    const dryText = await crm(['batch', 'contacts', exported, '--update', '--dry-run', '-o', 'table']);
    expect(dryText.stdout.replace(/\s+/g, ' ')).toContain('this plan read the page of records the run reads');

    const update = await crm(['batch', 'contacts', exported, '--update']);
    // two rows invalid, the rest sent: some rows not sent, the contract's exit for rows that failed
    expect(update.code, update.stderr).toBe(9);
    for (const [i, r] of held.entries()) expect((await api('GET', `/contacts/${ids[i]}`)).vip).toEqual(r.vip);
    const rejects = parse<Record<string, string>>(readFileSync(`${exported}.update.rejects.csv`, 'utf8'), {
      columns: true,
      bom: true,
    });
    const mixedRows = rejects.filter((r) => r.email !== undefined && /mixed\.test$/.test(r.email));
    expect(mixedRows.map((r) => r.email).sort()).toEqual(['bool@mixed.test', 'text@mixed.test']);
    for (const r of mixedRows) {
      expect(r._error_message).toMatch(/vip "true" may be a boolean or text/);
      expect(r._error_message).toMatch(/--match id/);
      expect(r._error_message).toMatch(/vip:boolean/);
    }

    // the way the reason names: reads each record, so the unedited export changes nothing
    const reconcile = await crm(['batch', 'contacts', exported, '--match', 'id', '--dry-run', '-o', 'json']);
    expect(reconcile.code, reconcile.stderr).toBe(0);
    const plan = JSON.parse(reconcile.stdout) as { update: number; create: number };
    expect({ update: plan.update, create: plan.create }).toEqual({ update: 0, create: 0 });

    // typed in the header, the column says which: every row goes, as the header says
    const typed = join(dir, 'typed.csv');
    writeFileSync(typed, `id,vip:boolean\n${ids[0]},true\n${ids[1]},false\n`);
    const ok = await crm(['batch', 'contacts', typed, '--update']);
    expect(ok.code, ok.stderr).toBe(0);
    expect((await api('GET', `/contacts/${ids[1]}`)).vip).toBe(false);
  });
});
