// End to end: `crm links` on the four link sub-resources and the meeting associations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
const ids: Record<string, string> = {};
beforeAll(async () => {
  t = await startTestSandbox({ seed: 11 });
  for (const r of ['contacts', 'companies', 'deals', 'notes', 'segments', 'meetings']) {
    const res = await fetch(`${t.sb.baseUrl}/${r}?limit=2`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
    const data = ((await res.json()) as { data: Array<{ id: string }> }).data;
    ids[r] = data[0]!.id;
    ids[`${r}2`] = data[1]!.id;
  }
});
afterAll(async () => t?.close());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin') });
const requestCount = async () => ((await t.control('/requests')) as unknown[]).length;

describe('links', () => {
  it('deals → contacts with a type: add, relink is a no-op, list, remove', async () => {
    const add = await crm([
      '-o',
      'json',
      'links',
      'add',
      'deals',
      ids.deals!,
      'contacts',
      ids.contacts!,
      '--type',
      'champion',
      '--supervisor',
      ids.contacts2!,
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stderr).toMatch(/^Linked/m);
    expect(JSON.parse(add.stdout)).toMatchObject({ type: 'CHAMPION' });

    const again = await crm([
      '-o',
      'json',
      'links',
      'add',
      'deals',
      ids.deals!,
      'contacts',
      ids.contacts!,
      '--type',
      'CHAMPION',
    ]);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/Already linked.*no change/);

    const list = await crm(['-o', 'json', 'links', 'list', 'deals', ids.deals!, 'contacts']);
    const linked = JSON.parse(list.stdout) as Array<{ id: string }>;
    expect(linked.filter((c) => c.id === ids.contacts)).toHaveLength(1);

    const remove = await crm(['links', 'remove', 'deals', ids.deals!, 'contacts', ids.contacts!]);
    expect(remove.code, remove.stderr).toBe(0);
    const after = await crm(['-o', 'json', 'links', 'list', 'deals', ids.deals!, 'contacts']);
    expect((JSON.parse(after.stdout) as Array<{ id: string }>).some((c) => c.id === ids.contacts)).toBe(false);
    const removeAgain = await crm(['links', 'remove', 'deals', ids.deals!, 'contacts', ids.contacts!]);
    expect(removeAgain.code).toBe(5);
  });

  it('deals → companies, notes → records (with --record-type), segments → members', async () => {
    expect((await crm(['links', 'add', 'deals', ids.deals!, 'companies', ids.companies!])).code).toBe(0);
    expect(
      (await crm(['links', 'add', 'notes', ids.notes!, 'records', ids.companies!, '--record-type', 'company'])).code,
    ).toBe(0);
    expect((await crm(['links', 'add', 'notes', ids.notes!, 'records', ids.contacts!])).code).toBe(0);
    expect((await crm(['links', 'add', 'segments', ids.segments!, 'members', ids.contacts2!])).code).toBe(0);
    const members = await crm(['-o', 'json', 'links', 'list', 'segments', ids.segments!, 'members']);
    expect((JSON.parse(members.stdout) as Array<{ id: string }>).map((m) => m.id)).toContain(ids.contacts2);
  });

  it('a bad type is exit 2 listing the allowed values, and nothing is sent', async () => {
    const before = await requestCount();
    const r = await crm(['links', 'add', 'deals', ids.deals!, 'contacts', ids.contacts!, '--type', 'BOSS']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/PRIMARY, DECISION_MAKER.*COACH/);
    expect(await requestCount()).toBe(before);
  });

  it('an unknown parent/relation pair is exit 2 naming the valid pairs', async () => {
    const r = await crm(['links', 'list', 'contacts', ids.contacts!, 'deals']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/valid pairs: deals contacts, deals companies, notes records, segments members/);
  });

  it('an unknown parent or child is exit 5', async () => {
    expect((await crm(['links', 'add', 'deals', 'deal_nope', 'contacts', ids.contacts!])).code).toBe(5);
    expect((await crm(['links', 'add', 'deals', ids.deals!, 'contacts', 'con_nope'])).code).toBe(5);
  });

  it('--data replaces the assumed body; --dry-run sends nothing', async () => {
    const before = await requestCount();
    const dry = await crm([
      '-o',
      'json',
      'links',
      'add',
      'deals',
      ids.deals!,
      'contacts',
      ids.contacts!,
      '--data',
      '{"contact_id":"X","type":"COACH"}',
      '--dry-run',
    ]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout).body).toEqual({ contact_id: 'X', type: 'COACH' });
    expect(await requestCount()).toBe(before);
  });
});

describe('meeting associations', () => {
  it('get prints null when unset, set, get, clear', async () => {
    const m = ids.meetings!;
    await crm(['links', 'clear', 'meetings', m, 'deal']);
    const unset = await crm(['-o', 'json', 'links', 'get', 'meetings', m, 'deal']);
    expect(unset.code).toBe(0);
    expect(unset.stdout.trim()).toBe('null');
    const table = await crm(['-o', 'table', 'links', 'get', 'meetings', m, 'deal']);
    expect(table.stdout.trim()).toBe('no deal set');

    expect((await crm(['links', 'set', 'meetings', m, 'deal', ids.deals!])).code).toBe(0);
    const got = await crm(['-o', 'json', 'links', 'get', 'meetings', m, 'deal']);
    expect(JSON.parse(got.stdout).id).toBe(ids.deals);

    expect((await crm(['links', 'set', 'meetings', m, 'company', ids.companies!])).code).toBe(0);
    expect(JSON.parse((await crm(['-o', 'json', 'links', 'get', 'meetings', m, 'company'])).stdout).id).toBe(
      ids.companies,
    );

    expect((await crm(['links', 'clear', 'meetings', m, 'deal'])).code).toBe(0);
    expect((await crm(['-o', 'json', 'links', 'get', 'meetings', m, 'deal'])).stdout.trim()).toBe('null');
  });

  it('an unknown association is exit 2', async () => {
    const r = await crm(['links', 'get', 'meetings', ids.meetings!, 'contact']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/meetings deal, meetings company/);
  });
});
