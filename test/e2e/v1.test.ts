// End to end: the three deprecated version 1 operations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 13 });
});
afterAll(async () => t?.close());

const crm = (args: string[], extra: Record<string, string | undefined> = {}) =>
  runCrm(args, { env: t.env('admin', extra) });
const requestCount = async () => ((await t.control('/requests')) as unknown[]).length;

describe('crm v1', () => {
  it('people query: camelCase fields, a deprecation notice naming contacts', async () => {
    const r = await crm(['-o', 'json', 'v1', 'people', 'query', '--limit', '3']);
    expect(r.code, r.stderr).toBe(0);
    const people = JSON.parse(r.stdout);
    expect(people).toHaveLength(3);
    expect(Object.keys(people[0])).toEqual(expect.arrayContaining(['id', 'email', 'firstName', 'lastName']));
    expect(r.stderr).toMatch(/deprecated.*crm contacts list/);
    const quiet = await crm(['-q', '-o', 'json', 'v1', 'people', 'query', '--limit', '1']);
    expect(quiet.stderr).toBe('');
  });

  it('people query --all follows nextCursor across several pages', async () => {
    const r = await crm(['-o', 'ndjson', 'v1', 'people', 'query', '--limit', '7', '--all']);
    expect(r.code, r.stderr).toBe(0);
    const ids = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).id);
    expect(ids.length).toBe(40);
    expect(new Set(ids).size).toBe(40);
    const log = (await t.control('/requests')) as Array<{ path: string }>;
    expect(log.filter((e) => e.path.endsWith('/people/query')).length).toBeGreaterThanOrEqual(6);
  });

  it('people query filters by email', async () => {
    const all = JSON.parse((await crm(['-o', 'json', 'v1', 'people', 'query', '--limit', '1'])).stdout);
    const r = await crm(['-o', 'json', 'v1', 'people', 'query', '--email', all[0].email]);
    expect(JSON.parse(r.stdout).map((p: { id: string }) => p.id)).toEqual([all[0].id]);
  });

  it('interactions query', async () => {
    const r = await crm(['-o', 'json', 'v1', 'interactions', 'query', '--limit', '5']);
    expect(r.code, r.stderr).toBe(0);
    const rows = JSON.parse(r.stdout);
    expect(rows.length).toBeGreaterThan(0);
    expect(Object.keys(rows[0])).toEqual(expect.arrayContaining(['id', 'type', 'interactionDate']));
  });

  it('companies update: valid fields are sent; bad ones are exit 2 and nothing is sent', async () => {
    const list = await fetch(`${t.sb.baseUrl}/companies?limit=1`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const id = ((await list.json()) as { data: Array<{ id: string }> }).data[0]!.id;
    const ok = await crm([
      '-o',
      'json',
      'v1',
      'companies',
      'update',
      id,
      '--set',
      'city=Paris',
      '--set',
      'foundedYear:=1998',
      '--set',
      'tags:=["a","b"]',
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ id });
    const v2 = await fetch(`${t.sb.baseUrl}/companies/${id}`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
    expect(((await v2.json()) as { data: Record<string, unknown> }).data).toMatchObject({
      city: 'Paris',
      founded_year: 1998,
    });

    const before = await requestCount();
    for (const bad of [
      ['--set', 'industry=x'],
      ['--set', 'foundedYear=1998'],
      ['--set', 'tags=a'],
    ]) {
      const r = await crm(['v1', 'companies', 'update', id, ...bad]);
      expect(r.code, bad.join(' ')).toBe(2);
    }
    expect(await requestCount()).toBe(before);
  });

  it('a v2 key where the v1 key should be is refused before sending, explaining the difference', async () => {
    const before = await requestCount();
    const r = await crm(['v1', 'people', 'query'], { CRM_V1_API_KEY: t.sb.keys.admin });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/version 2 key/);
    expect(r.stderr).toMatch(/service_pk_/);
    expect(r.stderr).not.toContain(t.sb.keys.admin);
    expect(await requestCount()).toBe(before);
  });

  it('no v1 key configured is exit 3 with how to add one', async () => {
    const r = await crm(['v1', 'people', 'query'], { CRM_V1_API_KEY: undefined });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/crm keys add .*--v1/);
  });

  it('tables and CSV keep the camelCase names', async () => {
    const csv = await crm(['-o', 'csv', 'v1', 'people', 'query', '--limit', '2']);
    expect(csv.stdout.split('\n')[0]).toMatch(/firstName/);
  });
});

describe('crm v1 interactions query --all', () => {
  it('follows nextCursor when the server sends one', async () => {
    const s = await startTestSandbox({ seed: 13, v1InteractionsCursor: true });
    try {
      const r = await runCrm(['-o', 'ndjson', 'v1', 'interactions', 'query', '--limit', '7', '--all'], {
        env: s.env('admin'),
      });
      expect(r.code, r.stderr).toBe(0);
      const ids = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id);
      expect(ids.length).toBe(30);
      expect(new Set(ids).size).toBe(30);
    } finally {
      await s.close();
    }
  });
});
