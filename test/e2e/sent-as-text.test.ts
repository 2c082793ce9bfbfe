// Issue 28's trial: a CSV export created into an empty CRM turned every number, boolean and list into text
// without a word (the rule: a cell is text unless a record shows its field holds another kind, `00501` stays
// text). The run now says which columns go as text though every cell reads as a value, with the header type
// that sends them as values; pasted, the values are sent. A column the records hold as text is not named.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('crm-sent-as-text-');

describe('a create whose columns read as values no record shows', () => {
  it('is told which go as text and how to type them; typed as shown, they go as values; text fields are not named', async () => {
    const t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
    try {
      const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
      const get = async (email: string) =>
        (
          (await (
            await fetch(`${t.sb.baseUrl}/contacts?limit=100`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } })
          ).json()) as { data: Array<Record<string, unknown>> }
        ).data.find((r) => r.email === email)!;
      const file = join(dir, 'export.csv');
      writeFileSync(file, 'email,score,vip,tags,zip,nick\nt1@text.test,8,true,"[""x""]",00501,ann\n');
      const r = await crm(['batch', 'contacts', file]);
      expect(r.code, r.stderr).toBe(0);
      const said = r.stderr.replace(/\s+/g, ' ');
      expect(said).toMatch(
        /3 columns whose every cell reads as a value are sent as text \(score:number, vip:boolean, tags:json\): the CRM's records show no one kind for their fields/,
      );
      expect(said).not.toMatch(/zip:/);
      expect(await get('t1@text.test')).toMatchObject({ score: '8', vip: 'true', tags: '["x"]', zip: '00501' });

      // as the warning says: the header typed
      const typed = join(dir, 'typed.csv');
      writeFileSync(typed, 'email,score:number,vip:boolean,tags:json,zip\nt2@text.test,8,true,"[""x""]",00501\n');
      const r2 = await crm(['batch', 'contacts', typed]);
      expect(r2.code, r2.stderr).toBe(0);
      expect(r2.stderr).not.toMatch(/sent as text/);
      expect(await get('t2@text.test')).toMatchObject({ score: 8, vip: true, tags: ['x'], zip: '00501' });

      // the records now hold score as text (t1) and as a number (t2): named; nick only as text: not named
      const more = join(dir, 'more.csv');
      writeFileSync(more, 'email,score,nick\nt3@text.test,9,42\n');
      const r3 = await crm(['batch', 'contacts', more]);
      expect(r3.code, r3.stderr).toBe(0);
      expect(r3.stderr.replace(/\s+/g, ' ')).toMatch(
        /1 column whose every cell reads as a value is sent as text \(score:number\): the CRM's records show no one kind for its field/,
      );
      expect(r3.stderr).not.toMatch(/nick:number/);
    } finally {
      await t.close();
    }
  });
});
