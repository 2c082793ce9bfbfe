// Output edges (issue 17): a usage error's hint names the command's own help; an empty list in csv
// or tsv is still a valid file with its header row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox(); // no seed: every list is empty
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin') });

describe('-o yaml', () => {
  it.each([
    [['contacts', 'list', '-o', 'yaml'], 'crm contacts list'],
    [['-o', 'yaml', 'deals', 'get', 'deal_1'], 'crm deals get'],
    [['links', 'list', '--output', 'yaml'], 'crm links list'],
  ])('%j: exit 2, the hint names %s --help', async (args, command) => {
    const r = await crm(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/argument 'yaml' is invalid/);
    expect(r.stderr).toMatch(new RegExp(`^Hint: see ${command} --help$`, 'm'));
  });
});

describe('an empty list in csv and tsv', () => {
  it.each([
    ['csv', 'id,email,first_name,last_name,company_id,owner_id\n'],
    ['tsv', 'id\temail\tfirst_name\tlast_name\tcompany_id\towner_id\n'],
  ])('contacts list -o %s: the header row of the default columns', async (format, header) => {
    const r = await crm(['contacts', 'list', '-o', format]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(header);
  });

  it('--all and --fields: the header of --fields', async () => {
    const r = await crm(['deals', 'list', '--all', '-o', 'csv', '--fields', 'id,name,amount']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('id,name,amount\n');
  });
});
