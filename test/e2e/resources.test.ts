// End to end: the built `crm` against the sandbox, for the resource commands and the exit codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 7 });
});
afterAll(async () => t?.close());

const crm = (args: string[], key: Parameters<TestSandbox['env']>[0] = 'admin', extra = {}, input?: string) =>
  runCrm(args, { env: t.env(key, extra), input });

describe('create, get, update, list, delete on every writable resource', () => {
  const bodies: Record<string, string[]> = {
    contacts: ['--set', 'email=e2e@example.com', '--set', 'first_name=Ada'],
    companies: ['--set', 'name=E2E Inc'],
    deals: ['--set', 'name=Big deal', '--set', 'amount:=1200'],
    pipelines: ['--set', 'name=Sales', '--set', 'stages:=["lead","won"]'],
    tasks: ['--set', 'title=Call back'],
    notes: ['--set', 'body=Met at the fair'],
    segments: ['--set', 'name=VIP'],
  };
  for (const [resource, body] of Object.entries(bodies)) {
    it(resource, async () => {
      const created = await crm(['-o', 'json', resource, 'create', ...body]);
      expect(created.code, created.stderr).toBe(0);
      const record = JSON.parse(created.stdout);
      expect(record.id).toMatch(/^[a-z]+_/);

      const got = await crm(['-o', 'json', resource, 'get', record.id]);
      expect(JSON.parse(got.stdout)).toEqual(record);

      const updated = await crm(['-o', 'json', resource, 'update', record.id, '--set', 'label=changed']);
      expect(updated.code, updated.stderr).toBe(0);
      expect(JSON.parse(updated.stdout).label).toBe('changed');

      const deleted = await crm([resource, 'delete', record.id, '--yes', '--no-backup']);
      expect(deleted.code, deleted.stderr).toBe(0);
      const gone = await crm([resource, 'get', record.id]);
      expect(gone.code).toBe(5);
      expect(gone.stderr).toMatch(/^Error: .*\(HTTP 404 NOT_FOUND, request req_/m);
    });
  }

  it('interactions can be created but not updated', async () => {
    const created = await crm(['-o', 'json', 'interactions', 'create', '--data', '{"type":"call","title":"Intro"}']);
    expect(created.code, created.stderr).toBe(0);
    const update = await crm(['interactions', 'update', JSON.parse(created.stdout).id, '--set', 'title=x']);
    expect(update.code).toBe(2);
  });

  it('--data - reads the body from stdin, and --set wins over it', async () => {
    const r = await crm(
      ['-o', 'json', 'companies', 'create', '--data', '-', '--set', 'name=From set'],
      'admin',
      {},
      '{"name":"From stdin","domain":"x.io"}',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ name: 'From set', domain: 'x.io' });
  });
});

describe('output formats', () => {
  it('json is an array, ndjson one object per line, csv and tsv have a header row', async () => {
    const json = await crm(['-o', 'json', 'contacts', 'list', '--limit', '5']);
    const arr = JSON.parse(json.stdout);
    expect(arr).toHaveLength(5);
    const nd = await crm(['-o', 'ndjson', 'contacts', 'list', '--limit', '5']);
    expect(
      nd.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(arr);
    const csv = await crm(['-o', 'csv', '--fields', 'id,email', 'contacts', 'list', '--limit', '5']);
    expect(parse(csv.stdout, { columns: true })).toEqual(
      arr.map((c: { id: string; email: string }) => ({ id: c.id, email: c.email })),
    );
    const tsv = await crm(['-o', 'tsv', '--fields', 'id,email', 'contacts', 'list', '--limit', '5']);
    expect(tsv.stdout.split('\n')[0]).toBe('id\temail');
  });

  it('table is the default on a terminal only; piped output is json', async () => {
    const piped = await crm(['contacts', 'list', '--limit', '2']);
    expect(JSON.parse(piped.stdout)).toEqual([
      expect.objectContaining({ id: expect.stringMatching(/^con_/) }),
      expect.objectContaining({ id: expect.stringMatching(/^con_/) }),
    ]);
    const table = await crm(['-o', 'table', 'contacts', 'list', '--limit', '2']);
    expect(table.stdout).toMatch(/id.*email/);
    expect(table.stderr).toMatch(/--cursor/); // the next-page hint goes to stderr
  });

  it('--all follows every page of 500+ records, and --max stops early', async () => {
    const rows = Array.from({ length: 520 }, (_, i) => ({ email: `bulk${i}@example.com` }));
    for (let i = 0; i < rows.length; i += 100) {
      const res = await fetch(`${t.sb.baseUrl}/contacts/batch`, {
        method: 'POST',
        headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'Content-Type': 'application/json' },
        body: JSON.stringify(rows.slice(i, i + 100)),
      });
      expect(res.status).toBe(200);
    }
    const everything = await crm(['-o', 'ndjson', 'contacts', 'list', '--all']);
    const ids = everything.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ids.length).toBeGreaterThanOrEqual(560);
    expect(new Set(ids).size).toBe(ids.length);
    const some = await crm(['-o', 'ndjson', 'contacts', 'list', '--all', '--max', '130']);
    expect(some.stdout.trim().split('\n')).toHaveLength(130);
  });
});

describe('keys and access', () => {
  it('a read-only key writing is exit 4 (403)', async () => {
    const r = await crm(['contacts', 'create', '--set', 'email=x@y.z'], 'readonly');
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/403/);
  });

  it("a user-bound key reading another user's record is exit 4", async () => {
    const list = await crm(['-o', 'json', 'contacts', 'list', '--all']);
    const other = JSON.parse(list.stdout).find((c: { owner_id: string }) => c.owner_id !== 'usr_user');
    const r = await crm(['contacts', 'get', other.id], 'user');
    expect(r.code).toBe(4);
  });

  it('a v1 key on version 2 is refused before sending (exit 3)', async () => {
    const r = await crm(['contacts', 'list'], 'v1');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/version 1 key/);
  });

  it('an unknown key is exit 3', async () => {
    const r = await crm(['contacts', 'list'], 'admin', { CRM_API_KEY: 'service_live_not_a_real_key_0000' });
    expect(r.code).toBe(3);
  });

  it('the key never appears in any output, even with --verbose', async () => {
    const key = t.sb.keys.admin;
    const r = await crm(['--verbose', '-o', 'json', 'contacts', 'list', '--limit', '2']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/api\/v2\/contacts\?limit=2 200/);
    expect(r.stdout + r.stderr).not.toContain(key);
    const bad = await crm(['--verbose', 'contacts', 'get', 'con_nope']);
    expect(bad.stdout + bad.stderr).not.toContain(key);
  });
});

describe('exit codes from the server', () => {
  it('422 validation is exit 6 with the details', async () => {
    const r = await crm(['contacts', 'create', '--set', 'first_name=NoEmail']);
    expect(r.code).toBe(6);
    expect(r.stderr).toMatch(/VALIDATION_FAILED/);
    expect(r.stderr).toMatch(/email/);
  });

  it('bad JSON in --data is exit 2 and nothing is sent', async () => {
    const before = ((await t.control('/requests')) as unknown[]).length;
    const r = await crm(['contacts', 'create', '--data', '{"email":']);
    expect(r.code).toBe(2);
    expect(((await t.control('/requests')) as unknown[]).length).toBe(before);
  });
});
