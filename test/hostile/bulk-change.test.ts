// Bulk update, delete and link (issue 12) against servers shaped unlike the sandbox: a relink answered
// 409 (the sandbox answers 201), a 404 to a first DELETE (not an earlier attempt's success), a link answer
// keeping another type, and a server answering a PATCH with no Idempotent-Replayed header on a resend.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { errorEnvelope, json, startHostile, success, type Hostile } from './server.js';
import { tempDir } from '../helpers/temp.js';

let h: Hostile;
let dir: string;
beforeAll(async () => {
  h = await startHostile();
  dir = tempDir('crm-hostile-bulk-');
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));
const crm = (args: string[]) => runCrm(['-o', 'json', ...args], { env: h.env(), cwd: dir });

it('a relink answered 409 CONFLICT counts as linked (exit 0), and nothing is looked up', async () => {
  h.route('POST', /\/segments\/seg_1\/members$/, (req, res) => {
    const { contact_id } = JSON.parse(req.body) as { contact_id: string };
    if (contact_id === 'con_2') return json(res, 409, errorEnvelope('CONFLICT', 'already a member'));
    json(res, 201, success({ id: `lnk_${contact_id}`, contact_id }));
  });
  const r = await crm([
    'links',
    'add',
    'segments',
    'seg_1',
    'members',
    '--file',
    file('relink.txt', 'con_1\ncon_2\ncon_3\n'),
  ]);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, linked: 3, failed: 0 });
  expect(h.log.map((x) => x.method)).toEqual(['POST', 'POST', 'POST']);
});

it('a 404 to a first DELETE is that row not found (exit 9, in the rejects file), not an earlier success', async () => {
  h.route('DELETE', /\/contacts\/con_gone$/, (_req, res) =>
    json(res, 404, errorEnvelope('NOT_FOUND', 'Contact con_gone not found')),
  );
  h.route('DELETE', /\/contacts\/con_here$/, (_req, res) => json(res, 200, success({ id: 'con_here', deleted: true })));
  const input = file('del.txt', 'con_here\ncon_gone\n');
  const r = await crm(['batch', 'contacts', input, '--delete', '--yes']);
  expect(r.code, r.stderr).toBe(9);
  expect(JSON.parse(r.stdout)).toMatchObject({ rows: 2, deleted: 1, failed: 1 });
  const rejects = readFileSync(`${input}.delete.rejects.csv`, 'utf8');
  expect(rejects).toMatch(/^con_gone,2,NOT_FOUND,Contact con_gone not found$/m);
});

it('a DELETE whose first answer is lost and whose retry is 404 counts as deleted (the earlier attempt did it)', async () => {
  h.route('DELETE', /\/contacts\/con_1$/, (_req, res, ctx) => {
    if (ctx.count === 0) return void res.socket?.destroy(); // deleted, then the answer is lost
    json(res, 404, errorEnvelope('NOT_FOUND', 'Contact con_1 not found'));
  });
  const r = await crm(['batch', 'contacts', file('lost.txt', 'con_1\n'), '--delete', '--yes', '--no-backup']);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ rows: 1, deleted: 1, failed: 0 });
  expect(h.log).toHaveLength(2);
});

it('a link kept with its old type is said once, naming it; the run still succeeds', async () => {
  h.route('POST', /\/deals\/deal_1\/contacts$/, (req, res) => {
    const { contact_id } = JSON.parse(req.body) as { contact_id: string };
    json(res, 201, success({ id: `lnk_${contact_id}`, contact_id, type: 'CHAMPION' }));
  });
  const input = file('roles.csv', 'deal_id,contact_id,type\ndeal_1,con_1,champion\ndeal_1,con_2,primary\n');
  const r = await crm(['links', 'import', 'deals', 'contacts', input]);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ linked: 2 });
  expect(r.stderr).toMatch(/1 link was already there with other fields, kept as they were/);
  expect(r.stderr).toMatch(/con_2: type "CHAMPION" kept \(asked "PRIMARY"\)/);
  expect(r.stderr).not.toMatch(/con_1:/);
});

it('every PATCH carries its row key, the same on a retry; a server that says nothing of replays still gets each row once per try', async () => {
  h.route('PATCH', /\/contacts\/con_\d$/, (req, res, ctx) => {
    if (req.path.endsWith('con_2') && ctx.count === 1) return json(res, 503, errorEnvelope('UNAVAILABLE', 'try again'));
    json(res, 200, success({ id: req.path.split('/').pop(), ...JSON.parse(req.body) }));
  });
  const r = await crm([
    'batch',
    'contacts',
    file('upd.csv', 'id,title\ncon_1,A\ncon_2,B\ncon_3,C\n'),
    '--update',
    '--concurrency',
    '1',
  ]);
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ rows: 3, updated: 3, retries: 1 });
  // (before them, one GET of the collection: the column check's read)
  const patches = h.log.filter((x) => x.method === 'PATCH');
  const keys = patches.map((x) => [x.path.split('/').pop(), x.headers['idempotency-key']] as const);
  expect(keys.map(([id]) => id)).toEqual(['con_1', 'con_2', 'con_2', 'con_3']);
  expect(keys[1]![1]).toBe(keys[2]![1]);
  expect(new Set(keys.map(([, k]) => k)).size).toBe(3);
  expect(keys.every(([, k]) => typeof k === 'string' && k.startsWith('crm-update-'))).toBe(true);
});

it('a rejected update sent again by a rerun is followed by the later row of its record done then: the file order wins (issue 17)', async () => {
  const value = new Map<string, string>();
  let refuseA = true;
  h.route('PATCH', /\/contacts\/con_1$/, (req, res) => {
    const { first_name } = JSON.parse(req.body) as { first_name: string };
    if (refuseA && first_name === 'A') return json(res, 422, errorEnvelope('VALIDATION_FAILED', 'first_name: not yet'));
    value.set('con_1', first_name);
    json(res, 200, success({ id: 'con_1', first_name }));
  });
  const input = file('order.csv', 'id,first_name\ncon_1,A\ncon_1,B\n');
  const first = await crm(['batch', 'contacts', input, '--update']);
  expect(first.code, first.stderr).toBe(9);
  expect(value.get('con_1')).toBe('B');
  refuseA = false;
  const rerun = await crm(['batch', 'contacts', input, '--update']);
  expect(rerun.code, rerun.stderr).toBe(0);
  expect(JSON.parse(rerun.stdout)).toMatchObject({ updated: 2, failed: 0 });
  // A, then B again: the file's last row for the record is what stays
  expect(
    h.log.filter((x) => x.method === 'PATCH').map((x) => (JSON.parse(x.body) as { first_name: string }).first_name),
  ).toEqual(['A', 'B', 'A', 'B']);
  expect(value.get('con_1')).toBe('B');
});

it('a later run of the same change is applied again by a server that caches answers by key and never says Idempotent-Replayed (issue 17)', async () => {
  // the server's state, and its idempotency cache: a known key gets the first answer again, nothing applied
  const title = new Map<string, string>();
  const linked = new Set<string>();
  const cache = new Map<string, unknown>();
  const cached = (req: { headers: Record<string, unknown> }, apply: () => unknown) => {
    const key = String(req.headers['idempotency-key']);
    if (!cache.has(key)) cache.set(key, apply());
    return cache.get(key);
  };
  h.route('PATCH', /\/contacts\/con_1$/, (req, res) =>
    json(
      res,
      200,
      success(
        cached(req, () => (title.set('con_1', (JSON.parse(req.body) as { title: string }).title), { id: 'con_1' })),
      ),
    ),
  );
  h.route('POST', /\/deals\/deal_1\/contacts$/, (req, res) =>
    json(
      res,
      201,
      success(
        cached(
          req,
          () => (linked.add((JSON.parse(req.body) as { contact_id: string }).contact_id), { deal_id: 'deal_1' }),
        ),
      ),
    ),
  );
  const upd = file('title.csv', 'id,title\ncon_1,CEO\n');
  const pairs = file('pairs.csv', 'deal_id,contact_id\ndeal_1,con_1\n');
  const update = (input: string, more: string[] = []) => crm(['batch', 'contacts', input, '--update', ...more]);
  const link = (more: string[] = []) => crm(['links', 'import', 'deals', 'contacts', pairs, ...more]);
  expect((await update(upd)).code).toBe(0);
  expect((await link()).code).toBe(0);
  expect([title.get('con_1'), linked.has('con_1')]).toEqual(['CEO', true]);
  // a colleague changes the title and removes the link; the same change is sent again (--no-resume, or another file: the
  // same bytes again are answered from the journal, saying nothing is sent): a run of its own, new keys
  for (const again of [
    () => update(upd, ['--no-resume']),
    () => update(file('title-crlf.csv', 'id,title\r\ncon_1,CEO\r\n')),
  ]) {
    title.set('con_1', 'CTO');
    const r = await again();
    expect(r.code, r.stderr).toBe(0);
    expect(title.get('con_1'), r.stderr).toBe('CEO');
  }
  linked.delete('con_1');
  expect((await link(['--no-resume'])).code).toBe(0);
  expect(linked.has('con_1')).toBe(true);
  const keys = h.log.filter((x) => x.method !== 'GET').map((x) => x.headers['idempotency-key']);
  expect(new Set(keys).size).toBe(keys.length);
});

// Issue 29's alike stop (send/dispatch.ts firstRowsAlike) against answers unlike the sandbox's: "the same error"
// is the same code and message, however the body is shaped; a server naming each row in its message is not alike.
const ids = (n: number) => Array.from({ length: n }, (_, i) => `con_${i + 1}`);
const updates = (name: string, n: number) =>
  file(
    name,
    `id,first_name\n${ids(n)
      .map((id) => `${id},Ada`)
      .join('\n')}\n`,
  );
const patches = () => h.log.filter((x) => x.method === 'PATCH').length;

it('every PATCH answered 422 with one message in a bare, envelope-less body: stops after the first 10 (exit 9)', async () => {
  h.route('PATCH', /\/contacts\/con_\d+$/, (_req, res) =>
    json(res, 422, { error: { code: 'VALIDATION_FAILED', message: 'first_name is locked' } }),
  );
  const r = await crm(['batch', 'contacts', updates('locked.csv', 40), '--update', '--concurrency', '1']);
  expect(r.code, r.stderr).toBe(9);
  expect(patches()).toBe(10);
  expect(r.stderr.replace(/\s+/g, ' ')).toMatch(
    /stopped after the first 10 rows answered: they all failed with the same error \(VALIDATION_FAILED: first_name is locked\)/,
  );
  expect(JSON.parse(r.stdout)).toMatchObject({ rows: 40, failed: 10, not_sent: 30 });
});

it('a 422 whose message names each row is not "alike": every row is sent, none stopped', async () => {
  h.route('PATCH', /\/contacts\/con_\d+$/, (req, res) =>
    json(res, 422, errorEnvelope('VALIDATION_FAILED', `${req.path.split('/').pop()} is archived`)),
  );
  const r = await crm(['batch', 'contacts', updates('archived.csv', 15), '--update', '--concurrency', '1']);
  expect(r.code, r.stderr).toBe(9);
  expect(patches()).toBe(15);
  expect(r.stderr).not.toMatch(/stopped after the first/);
});

it('alike failures after a row went through: no stop (the mapping is right; those rows are wrong)', async () => {
  h.route('PATCH', /\/contacts\/con_\d+$/, (req, res, ctx) => {
    const id = req.path.split('/').pop()!;
    if (ctx.count === 0) return json(res, 200, success({ id, first_name: 'Ada' }));
    json(res, 422, errorEnvelope('VALIDATION_FAILED', 'first_name is locked'));
  });
  const r = await crm(['batch', 'contacts', updates('after.csv', 15), '--update', '--concurrency', '1']);
  expect(r.code, r.stderr).toBe(9);
  expect(patches()).toBe(15);
  expect(JSON.parse(r.stdout)).toMatchObject({ rows: 15, failed: 14 });
});
