// The files a hint says to fix or choose rows in (a rejects file, `<input>.ambiguous.csv`) are written again by the
// next run of the same command: one a user edited is moved to its own name (`<stem>.<time>.csv`) first and the run
// says so, never overwritten (issue 30's second trial: edits to three such files were lost to a rerun).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiData } from '../helpers/api-data.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
const dir = tempDir('crm-edited-kept-');
beforeAll(async () => {
  t = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  await apiData(t, 'POST', '/contacts', { email: 'twin@kept.test', first_name: 'One' });
  await apiData(t, 'POST', '/contacts', { email: 'twin@kept.test', first_name: 'Two' });
  await apiData(t, 'POST', '/deals', { name: 'Kept deal' });
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin'), cwd: dir, timeoutMs: 60_000 });
const read = (name: string) => readFileSync(join(dir, name), 'utf8');
const own = (stem: string) =>
  readdirSync(dir).filter((f) => new RegExp(`^${stem}\\.\\d{8}T\\d{6}Z(-\\d+)?\\.csv$`).test(f));

/** Runs `args`, edits `file` (appends a note to its last line), runs `args` again: what the second run said. */
async function editThenRerun(args: string[], file: string, code: number) {
  const first = await crm(args);
  expect(first.code, first.stderr).toBe(code);
  const edited = read(file).trimEnd() + ' (checked by Ada)\n';
  writeFileSync(join(dir, file), edited);
  const again = await crm(args);
  expect(again.code, again.stderr).toBe(code);
  return { edited, again };
}

describe('a file a hint says to edit, edited, then the same command again', () => {
  it("batch's rejects file", async () => {
    writeFileSync(join(dir, 'people.csv'), 'email,first_name\nfine@kept.test,Fine\nnot-an-email,Bad\n');
    const { edited, again } = await editThenRerun(['batch', 'contacts', 'people.csv'], 'people.csv.rejects.csv', 9);
    const kept = own('people\\.csv\\.rejects');
    expect(kept).toHaveLength(1);
    expect(read(kept[0]!)).toBe(edited);
    expect(again.stderr).toContain(
      `people.csv.rejects.csv was there already, other than this run writes it (an earlier run's, or edited): kept as`,
    );
    expect(read('people.csv.rejects.csv')).not.toContain('checked by Ada'); // the run's own, written again
  });

  it("batch --match's ambiguous file", async () => {
    writeFileSync(join(dir, 'twins.csv'), 'email,first_name\ntwin@kept.test,Twin\n');
    const args = ['batch', 'contacts', 'twins.csv', '--match', 'email'];
    const { edited, again } = await editThenRerun(args, 'twins.csv.ambiguous.csv', 9);
    const kept = own('twins\\.csv\\.ambiguous');
    expect(kept).toHaveLength(1);
    expect(read(kept[0]!)).toBe(edited);
    expect(again.stderr).toContain('twins.csv.ambiguous.csv was there already');
  });

  it("links import's rejects file", async () => {
    writeFileSync(join(dir, 'pairs.csv'), 'deal.name,contact.email\nKept deal,nobody@kept.test\n');
    const args = ['links', 'import', 'deals', 'contacts', 'pairs.csv'];
    const file = 'pairs.csv.link-deals-contacts.rejects.csv';
    const { edited, again } = await editThenRerun(args, file, 9);
    const kept = own('pairs\\.csv\\.link-deals-contacts\\.rejects');
    expect(kept).toHaveLength(1);
    expect(read(kept[0]!)).toBe(edited);
    expect(again.stderr).toContain(`${file} was there already`);
  });

  it('a rerun that writes what the last one wrote keeps nothing', async () => {
    const before = readdirSync(dir).length;
    const r = await crm(['links', 'import', 'deals', 'contacts', 'pairs.csv']);
    expect(r.code).toBe(9);
    expect(r.stderr).not.toContain('was there already');
    expect(readdirSync(dir).length).toBe(before);
  });
});
