// The owners file follows from what the file holds, not its name (issue 28): a plain create's rows whose owner_id the
// create leaves out (the server sets it) go through a results file to `<input>.owners.csv`; rows whose owner_id is
// sent under another field (--map), or that carry none, do not.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropResults, restoreResults, writeOwners, type RestoreRun } from '../../../src/import/files/owners.js';

const dir = mkdtempSync(join(tmpdir(), 'crm-owners-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A run creating from a new file `name` holding `content`. */
function runOf(name: string, content: string | Buffer, more: Partial<RestoreRun> = {}): RestoreRun {
  const file = join(dir, `${n++}-${name}`);
  writeFileSync(file, content);
  return { file, resource: 'contacts', creates: true, tmpDir: dir, ...more };
}

const csv = (header: string) => `${header}\r\na@x.test,usr_other\r\n`;
const line = (o: object) => `${JSON.stringify(o)}\n`;

describe('restoreResults: a results file exactly when the create leaves owner_id out', () => {
  it.each([
    ['owners.csv', csv('email,owner_id'), {}, true],
    ['owners.csv', csv('email,Owner ID'), {}, true],
    ['owners.csv', csv('email,owner_id:string'), {}, true],
    ['owners.tsv', 'email\towner_id\na@x.test\tusr_other\n', {}, true],
    // written exactly, the field is sent (and refused by the server): not left out
    ['owners.csv', csv('email,"""owner_id"""'), {}, false],
    ['owners.csv', csv('email,owner_id'), { maps: ['owner_id=previous_owner'] }, false],
    ['owners.csv', csv('email,owner_id'), { maps: ['owner_id='] }, false],
    ['owners.csv', csv('email,first_name'), {}, false],
    ['owners.ndjson', line({ email: 'a@x.test', owner_id: 'usr_other' }), {}, true],
    ['owners.json', `[${JSON.stringify({ email: 'a@x.test', owner_id: 'usr_other' })}]`, {}, true],
    ['kept.bak', line({ email: 'a@x.test', owner_id: 'usr_other' }), { format: 'ndjson' as const }, true],
    ['owners.ndjson', line({ email: 'a@x.test', owner_id: 'usr_other' }), { maps: ['owner_id=previous'] }, false],
    ['owners.ndjson', line({ email: 'a@x.test' }), {}, false],
    ['owners.ndjson', line({ email: 'a@x.test', owner_id: 'usr_other' }), { creates: false }, false],
  ])('%s %j %j: %s', async (name, content, more, expected) => {
    const run = runOf(name, content, more);
    const r = await restoreResults(run);
    expect(r.owner !== undefined).toBe(expected);
    expect(r.temporary).toBe(expected);
    if (expected) expect(r.path).toMatch(/\.results-\d+-\d+\.tmp\.csv$/);
  });

  it('a CSV in another encoding is read as the engine reads it (--encoding)', async () => {
    const run = runOf('latin1.csv', Buffer.from('Prénom,Owner ID\r\nZoë,usr_other\r\n', 'latin1'), {
      encoding: 'windows-1252',
    });
    expect((await restoreResults(run)).owner).toEqual({ at: 3, type: 'string' });
  });

  it('standard input has no <input> to name the owners file by', async () => {
    expect(
      (await restoreResults({ file: '-', resource: 'contacts', creates: true, tmpDir: dir })).owner,
    ).toBeUndefined();
  });

  it('an NDJSON --results file is refused before anything is sent (it is not read back)', async () => {
    const run = runOf('refused.ndjson', line({ owner_id: 'usr_other' }), { results: join(dir, 'r.ndjson') });
    await expect(restoreResults(run)).rejects.toThrow(/made from a CSV results file, not --results .*r\.ndjson/);
  });
});

describe('writeOwners: each new id with the owner its row had, exactly', () => {
  it("a CSV input's owner column, typed and formula-guarded as written; rows without an owner are left out", async () => {
    const run = runOf('typed.csv', csv('_line,email,id,Owner ID:string'));
    const results = await restoreResults(run);
    expect(results.owner).toEqual({ at: 4, type: 'string' });
    // what createResultsWriter writes for that input: `_line`, `id`, then its kept columns (`id` as `_input_id`)
    writeFileSync(
      results.path!,
      '_line,id,email,_input_id,Owner ID:string\r\n' +
        "2,con_new1,a@x.test,con_old1,'-3\r\n" +
        '3,con_new2,b@x.test,con_old2,\r\n' +
        '4,con_new3,c@x.test,con_old3,"a,b ""q"""\r\n',
    );
    const owners = await writeOwners(run, results);
    expect(owners).toBe(`${run.file}.owners.csv`);
    expect(readFileSync(owners!, 'utf8')).toBe('id,owner_id\r\ncon_new1,\'-3\r\ncon_new3,"a,b ""q"""\r\n');
    expect(statSync(owners!).mode & 0o777).toBe(0o600);
    // crm's own results file is kept until the backup's links are made from it too, then dropped
    expect(existsSync(results.path!)).toBe(true);
    await dropResults(results);
    expect(existsSync(results.path!)).toBe(false);
  });

  it("an NDJSON input's owner_id key, wherever the results file has it", async () => {
    const run = runOf('keys.ndjson', line({ id: 'con_old1', email: 'a@x.test', owner_id: '=1+1' }));
    const results = await restoreResults(run);
    writeFileSync(results.path!, `_line,id,email,owner_id,created_at\r\n1,con_new1,a@x.test,'=1+1,2026-01-01\r\n`);
    expect(readFileSync((await writeOwners(run, results))!, 'utf8')).toBe("id,owner_id\r\ncon_new1,'=1+1\r\n");
  });

  it('no owners file when no row created had an owner', async () => {
    const run = runOf('none.ndjson', line({ email: 'a@x.test', owner_id: '' }));
    const results = await restoreResults(run);
    writeFileSync(results.path!, '_line,id,email,owner_id\r\n1,con_new1,a@x.test,\r\n');
    expect(await writeOwners(run, results)).toBeUndefined();
    expect(existsSync(`${run.file}.owners.csv`)).toBe(false);
  });
});
