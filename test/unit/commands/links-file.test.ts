// `crm links import` and `crm links add --file` in-process: the options runBatch gets (pure), the
// usage errors, and two runs against the in-process sandbox with the real HTTP client.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LinkOptions } from '../../../src/commands/links/command.js';
import { linkFileBatch, runLinks } from '../../../src/commands/links/run.js';
import { credentialsFor } from '../../../src/config/credentials.js';
import { createClient } from '../../../src/http/client.js';
import { UsageError } from '../../../src/http/errors.js';
import { fakeCtx, type FakeCtx } from '../../helpers/fake-ctx.js';
import { startSandbox, type Sandbox } from '../../helpers/sandbox.js';

const imp = (parent: string, relation: string, o: Partial<LinkOptions> = {}): LinkOptions =>
  ({ verb: 'import', parent, relation, file: 'pairs.csv', ...o }) as LinkOptions;
const add = (parent: string, id: string, relation: string, o: Partial<LinkOptions> = {}): LinkOptions =>
  ({ verb: 'add', parent, id, relation, ...o }) as LinkOptions;

describe('linkFileBatch: the batch options of a links file', () => {
  it('links import: the pair is the resource, one row per request, batch flags passed on', () => {
    const b = linkFileBatch(
      imp('deals', 'contacts', { rejects: 'r.csv', strict: true, resume: false, argv: ['links', 'import'] }),
    );
    expect(b).toMatchObject({ resource: 'deals/contacts', file: 'pairs.csv', chunkSize: 1, concurrency: 4 });
    expect(b).toMatchObject({ rejects: 'r.csv', strict: true, resume: false, argv: ['links', 'import'] });
    expect(b.operation).toMatchObject({
      kind: 'link',
      describe: 'link deals contacts',
      required: ['deal_id', 'contact_id'],
    });
    expect(linkFileBatch(imp('meetings', 'deal')).operation?.plan({ meeting_id: 'm1', deal_id: 'd1' })).toMatchObject({
      ok: true,
      request: { method: 'PUT', path: '/meetings/m1/deal', body: { deal_id: 'd1' } },
    });
  });

  it('links add --file: the fixed parent is part of the resource (the rows name only children: their keys must differ per parent)', () => {
    const b = linkFileBatch(add('segments', 'seg_1', 'members', { file: 'ids.txt', concurrency: 2 }));
    expect(b).toMatchObject({ resource: 'segments/seg_1/members', file: 'ids.txt', concurrency: 2, resume: true });
    expect(b.operation).toMatchObject({
      describe: 'link segments members seg_1',
      required: ['contact_id'],
      bare: 'contact_id',
    });
    expect(linkFileBatch(add('segments', 'seg_2', 'members', { file: 'ids.txt' })).resource).not.toBe(b.resource);
  });

  it.each([
    [add('segments', 's', 'members', { file: 'f', childId: 'con_1' }), /child id or --file, not both/],
    [add('deals', 'd', 'contacts', { file: 'f', type: 'CHAMPION' }), /--type applies to one link.*type column/],
    [add('notes', 'n', 'records', { file: 'f', recordType: 'company' }), /--record-type .*record_type column/],
    [add('deals', 'd', 'contacts', { file: 'f', data: '{}' }), /--data applies to one link/],
    [add('meetings', 'm', 'deal', { file: 'f' }), /meetings use 'crm links get\|set\|clear/],
    [add('segments', '..', 'members', { file: 'f' }), /invalid parent id/],
    [
      imp('contacts', 'deals'),
      /unknown link 'contacts deals'; valid pairs: deals contacts, .*segments members, meetings deal, meetings company/,
    ],
  ])('usage error %#', (o, message) => {
    expect(() => linkFileBatch(o)).toThrow(UsageError);
    expect(() => linkFileBatch(o)).toThrow(message);
  });
});

describe('links add without --file', () => {
  it('needs a child id; the file flags are refused (nothing is sent)', async () => {
    const ctx = fakeCtx();
    await expect(runLinks(add('segments', 's', 'members'), ctx)).rejects.toThrow(/needs the child id, or --file FILE/);
    await expect(
      runLinks(add('segments', 's', 'members', { childId: 'c', rejects: 'r.csv', resume: false }), ctx),
    ).rejects.toThrow('--rejects, --no-resume apply only with --file');
  });
});

describe('links from a file against the sandbox (in-process)', () => {
  let sb: Sandbox;
  let dir: string;
  const get = async (p: string) =>
    (
      (await (await fetch(`${sb.baseUrl}${p}`, { headers: { 'X-Service-Api-Key': sb.keys.admin } })).json()) as {
        data: unknown;
      }
    ).data;
  const ids = async (r: string) => ((await get(`/${r}?limit=3`)) as Array<{ id: string }>).map((x) => x.id);

  beforeAll(async () => {
    sb = await startSandbox({ seed: 3 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-links-file-'));
  });
  afterAll(async () => {
    await sb?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function liveCtx(): FakeCtx {
    const ctx: FakeCtx = fakeCtx({
      configDir: path.join(dir, 'config'),
      env: { CRM_BASE_URL: sb.baseUrl, CRM_API_KEY: sb.keys.admin },
      globals: { output: 'json' },
      client: async () => {
        const p = await ctx.profile();
        return createClient({ ...credentialsFor(p, 'v2'), authHeader: p.authHeader, maxRetries: 1 });
      },
    });
    return ctx;
  }

  it('one file of ids added to two segments links both (each parent its own keys)', async () => {
    const [s1, s2] = await ids('segments');
    const [c1, c2] = await ids('contacts');
    const file = path.join(dir, 'ids.txt');
    fs.writeFileSync(file, `${c1}\n${c2}\n`);
    const summaries: unknown[] = [];
    for (const s of [s1!, s2!]) {
      const ctx = liveCtx();
      await runLinks(add('segments', s, 'members', { file }), ctx);
      summaries.push(JSON.parse(ctx.stdoutText()));
    }
    for (const s of [s1!, s2!]) {
      const members = ((await get(`/segments/${s}/members?limit=100`)) as Array<{ id: string }>).map((m) => m.id);
      expect(members, s).toEqual(expect.arrayContaining([c1, c2]));
    }
    expect(summaries).toMatchObject(
      [s1, s2].map((s) => ({ resource: `segments/${s}/members`, operation: 'link', linked: 2, failed: 0 })),
    );
  });

  it('links import meetings company: a PUT per row', async () => {
    const [m1] = await ids('meetings');
    const [co] = await ids('companies');
    const file = path.join(dir, 'meetings.csv');
    fs.writeFileSync(file, `meeting_id,company_id\n${m1},${co}\n`);
    const ctx = liveCtx();
    await runLinks(imp('meetings', 'company', { file }), ctx);
    expect(JSON.parse(ctx.stdoutText())).toMatchObject({ resource: 'meetings/company', linked: 1 });
    expect(await get(`/meetings/${m1}/company`)).toMatchObject({ id: co });
  });
});
