// The restore's id map (CONTRACT §10): what add() wrote is read back by the next run, a later line wins, a line that is
// not the map's is refused naming the file and line.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdMap, idMapPath, targetName } from '../../../../src/commands/restore/id-map.js';
import { tempDir } from '../../../helpers/temp.js';

describe('IdMap', () => {
  it('a line added by hand (LF, or no newline at all: an ambiguous record settled) is read, and crm appends after it', async () => {
    const path = join(tempDir('crm-idmap-'), 'x.ids.csv');
    const first = await IdMap.open(path);
    await first.add([{ resource: 'contacts', snapshot: 'con_a', target: 'con_1', how: 'created' }]);
    first.close();
    appendFileSync(path, 'contacts,con_b,con_2,matched\ncontacts,con_c,con_3,matched');
    const second = await IdMap.open(path);
    expect([second.get('contacts', 'con_b'), second.get('contacts', 'con_c')]).toEqual(['con_2', 'con_3']);
    await second.add([{ resource: 'deals', snapshot: 'deal_a', target: 'deal_1', how: 'found' }]);
    second.close();
    const third = await IdMap.open(path);
    expect(['con_a', 'con_b', 'con_c'].map((id) => third.get('contacts', id))).toEqual(['con_1', 'con_2', 'con_3']);
    expect(third.get('deals', 'deal_a')).toBe('deal_1');
    third.close();
  });

  it('reads back every entry the runs before it added, the latest for a record winning', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(
            fc.record({
              resource: fc.constantFrom('contacts', 'deals'),
              snapshot: fc.string({ minLength: 1, maxLength: 6 }),
              target: fc.string({ minLength: 1, maxLength: 6 }),
            }),
            { maxLength: 8 },
          ),
          { maxLength: 3 },
        ),
        async (runs) => {
          const path = join(tempDir('crm-idmap-'), 'x.ids.csv');
          const want = new Map<string, string>();
          for (const entries of runs) {
            const map = await IdMap.open(path);
            await map.add(entries.map((e) => ({ ...e, how: 'created' as const })));
            for (const e of entries) want.set(`${e.resource}\0${e.snapshot}`, e.target);
            map.close();
          }
          const map = await IdMap.open(path);
          for (const [k, target] of want) {
            const [resource, snapshot] = k.split('\0');
            expect(map.get(resource!, snapshot!)).toBe(target);
          }
          expect(map.count('contacts') + map.count('deals')).toBe(want.size);
          map.close();
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses a line that is not the map’s, naming the file and line', async () => {
    const path = join(tempDir('crm-idmap-'), 'x.ids.csv');
    writeFileSync(path, 'resource,snapshot_id,target_id,how\r\ncontacts,a,b,created\r\n');
    appendFileSync(path, 'contacts,a,b,guessed\r\n');
    await expect(IdMap.open(path)).rejects.toThrow(`${path}, line 3: not a line of a restore's id map`);
    expect(readFileSync(path, 'utf8')).toContain('guessed');
  });

  it('names one map per target base URL, a safe file name', () => {
    expect(targetName('http://127.0.0.1:8080/api/v2')).not.toBe(targetName('http://127.0.0.1:8081/api/v2'));
    expect(idMapPath('/d', 'https://api.example.com/v2/')).toMatch(
      /^\/d\/restore\/api\.example\.com_v2~[0-9a-f]{12}\.ids\.csv$/,
    );
  });
});
