// `crm restore DIR --links` (CONTRACT §10, issue 31): a snapshot taken with --links, a bad delete of deals and contacts
// (their links gone with them), the restore: every link of the snapshot there again between the restored records, each
// once, with its type; the dry run's figures are the run's; a rerun, and a kill -9 then the same command, make none twice.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logLength, requestLog, stopAfter } from '../helpers/bulk.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

type Line = { parent_id: string; record: { id: string; link?: { child_type?: string; type?: string } } };
const lines = <T>(file: string): T[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

/** a kind's child collection when its link does not say (a meeting's deal and company, a segment's members) */
const CHILD: Record<string, string> = { deal: 'deals', company: 'companies', members: 'contacts' };

/** `kind parent child type` of every link a snapshot folder holds, its ids through `map` (the id map) when given. */
function linksOf(dir: string, map?: Map<string, string>): string[] {
  const out: string[] = [];
  for (const file of readdirSync(join(dir, 'links'))) {
    const [parent, relation] = file.replace(/\.ndjson$/, '').split('.');
    for (const l of lines<Line>(join(dir, 'links', file))) {
      const child = l.record.link?.child_type ?? CHILD[relation!] ?? relation!;
      const tr = (r: string, id: string) => map?.get(`${r}/${id}`) ?? id;
      out.push(
        `${parent}.${relation} ${tr(parent!, l.parent_id)} ${tr(child, l.record.id)} ${l.record.link?.type ?? ''}`,
      );
    }
  }
  return out.sort();
}

function idMapOf(dir: string, t: TestSandbox): Map<string, string> {
  const port = String(new URL(t.sb.baseUrl).port);
  const file = readdirSync(join(dir, 'restore')).find((f) => f.endsWith('.ids.csv') && f.includes(port))!;
  const rows = readFileSync(join(dir, 'restore', file), 'utf8')
    .trim()
    .split(/\r?\n/)
    .slice(1);
  return new Map(rows.map((r) => r.split(',')).map(([res, s, tgt]) => [`${res}/${s}`, tgt!]));
}

async function snapshotNow(t: TestSandbox): Promise<string> {
  const after = tempDir('crm-restore-after-');
  const r = await runCrm(['snapshot', after, '--links', '-o', 'json'], { env: t.env() });
  expect(r.code, r.stderr).toBe(0);
  return after;
}

async function deleteFirst(t: TestSandbox, dir: string, resource: string, n: number): Promise<void> {
  const ids = lines<{ id: string }>(join(dir, `${resource}.ndjson`))
    .slice(0, n)
    .map((r) => r.id);
  const file = join(tempDir('crm-restore-del-'), 'ids.csv');
  writeFileSync(file, `id\n${ids.join('\n')}\n`);
  const r = await runCrm(['batch', resource, file, '--delete', '--yes', '--no-backup', '-o', 'json'], { env: t.env() });
  expect(r.code, r.stderr).toBe(0);
}

const writes = async (t: TestSandbox, since: number) => (await requestLog(t, since)).filter((e) => e.method !== 'GET');

describe('crm restore --links', () => {
  it('brings back the links a delete took, each once, as the dry run said; a rerun writes nothing', async () => {
    const org = await startTestSandbox({ seed: 11, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
    try {
      const dir = tempDir('crm-restore-links-');
      expect((await runCrm(['snapshot', dir, '--links', '-o', 'json'], { env: org.env() })).code).toBe(0);
      const before = linksOf(dir);
      await deleteFirst(org, dir, 'deals', 4);
      await deleteFirst(org, dir, 'contacts', 6);
      const gone = before.length - linksOf(await snapshotNow(org)).length;
      expect(gone).toBeGreaterThan(0);

      const dry = await runCrm(['restore', dir, '--links', '--dry-run', '-o', 'json'], { env: org.env() });
      expect(dry.code, dry.stderr).toBe(0);
      const planned = (JSON.parse(dry.stdout) as { links: Array<{ to_make: number }> }).links;
      expect(planned.reduce((n, l) => n + l.to_make, 0)).toBe(gone);

      const since = await logLength(org);
      const run = await runCrm(['restore', dir, '--links', '--yes', '-o', 'json'], { env: org.env() });
      expect(run.code, run.stderr).toBe(0);
      const made = (JSON.parse(run.stdout) as { links: Array<{ made: number }> }).links;
      expect(made.reduce((n, l) => n + l.made, 0)).toBe(gone);
      const linkWrites = (await writes(org, since)).filter((e) => e.method !== 'PATCH' && !e.path.endsWith('/batch'));
      expect(linkWrites).toHaveLength(gone);
      expect(linksOf(await snapshotNow(org))).toEqual(linksOf(dir, idMapOf(dir, org)));

      const again = await logLength(org);
      expect((await runCrm(['restore', dir, '--links'], { env: org.env() })).code).toBe(0);
      expect(await writes(org, again)).toEqual([]);
    } finally {
      await org.close();
    }
  });

  it('a delete of contacts, then --resources contacts --links: the deals still there are linked to them again', async () => {
    const org = await startTestSandbox({ seed: 13, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
    try {
      const dir = tempDir('crm-restore-links-');
      expect((await runCrm(['snapshot', dir, '--links', '-o', 'json'], { env: org.env() })).code).toBe(0);
      const file = join(tempDir('crm-restore-del-'), 'ids.csv');
      const linked = [...new Set(lines<Line>(join(dir, 'links', 'deals.contacts.ndjson')).map((l) => l.record.id))];
      writeFileSync(file, `id\n${linked.slice(0, 3).join('\n')}\n`);
      const del = await runCrm(['batch', 'contacts', file, '--delete', '--yes'], { env: org.env() });
      expect(del.code, del.stderr).toBe(0);
      // the delete said how they come back
      expect(del.stderr.replace(/\s+/g, ' ')).toContain('crm restore DIR --resources contacts --links');
      const run = await runCrm(['restore', dir, '--resources', 'contacts', '--links', '-o', 'json'], {
        env: org.env(),
      });
      expect(run.code, run.stderr).toBe(0);
      const map = idMapOf(dir, org);
      const want = linksOf(dir, map).filter(
        (l) => l.startsWith('deals.contacts ') || l.startsWith('segments.') || l.startsWith('notes.'),
      );
      const now = linksOf(await snapshotNow(org));
      for (const l of want) expect(now, l).toContain(l);
    } finally {
      await org.close();
    }
  });

  it('killed during the deals’ creates: the dry run counts their links as to make (not left out), and the run makes them', async () => {
    const org = await startTestSandbox({ seed: 14, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
    const copy = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
    try {
      const dir = tempDir('crm-restore-links-');
      expect((await runCrm(['snapshot', dir, '--links', '-o', 'json'], { env: org.env() })).code).toBe(0);
      await copy.control('/faults', { latency_ms: 200 });
      // companies, pipelines, contacts, then the deals' batch POST: killed before its answer
      const r = await stopAfter(copy, ['restore', dir], {
        ...{ env: copy.env(), method: 'POST', after: 4, since: await logLength(copy), signal: 'SIGKILL' },
      });
      expect(r.signal, r.stderr).toBe('SIGKILL');
      await copy.control('/faults', { latency_ms: 0 });
      const dry = await runCrm(['restore', dir, '--links', '--dry-run', '-o', 'json'], { env: copy.env() });
      expect(dry.code, dry.stderr).toBe(0);
      const plan = JSON.parse(dry.stdout) as {
        collections: Array<{ resource: string; resumed: boolean }>;
        links: Array<{ kind: string; links: number; left_out: number; to_make: number }>;
      };
      expect(plan.collections.find((c) => c.resource === 'deals')!.resumed).toBe(true);
      const planned = plan.links.find((l) => l.kind === 'deals.contacts')!;
      expect(planned.links).toBeGreaterThan(0);
      expect(planned).toMatchObject({ left_out: 0, to_make: planned.links });
      const run = await runCrm(['restore', dir, '--links', '-o', 'json'], { env: copy.env() });
      expect(run.code, run.stderr).toBe(0);
      const made = (JSON.parse(run.stdout) as { links: Array<{ kind: string; made: number }> }).links;
      expect(made.find((l) => l.kind === 'deals.contacts')!.made).toBe(planned.to_make);
    } finally {
      await Promise.all([org.close(), copy.close()]);
    }
  });

  it('into another organization: every link between restored records, none of a meeting it does not hold; kill -9 then the same command', async () => {
    const org = await startTestSandbox({ seed: 12, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
    const copy = await startTestSandbox({ rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
    try {
      const dir = tempDir('crm-restore-links-');
      expect((await runCrm(['snapshot', dir, '--links', '-o', 'json'], { env: org.env() })).code).toBe(0);
      await copy.control('/faults', { latency_ms: 15 });
      // killed once the links are under way (the records' 8 batch POSTs, then links)
      const r = await stopAfter(copy, ['restore', dir, '--links'], {
        ...{ env: copy.env(), method: 'POST', after: 14, since: await logLength(copy), signal: 'SIGKILL' },
      });
      expect(r.signal, r.stderr).toBe('SIGKILL');
      await copy.control('/faults', { latency_ms: 0 });
      const run = await runCrm(['restore', dir, '--links', '-o', 'json'], { env: copy.env() });
      expect(run.code, run.stderr).toBe(0);
      const kinds = (JSON.parse(run.stdout) as { links: Array<{ kind: string; left_out: number; links: number }> })
        .links;
      for (const k of kinds) expect(k.left_out, k.kind).toBe(k.kind.startsWith('meetings.') ? k.links : 0);
      const want = linksOf(dir, idMapOf(dir, copy)).filter((l) => !l.startsWith('meetings.'));
      expect(linksOf(await snapshotNow(copy))).toEqual(want);

      // two deals deleted in the copy, then what the delete's notice says: --resources deals --links brings them back
      // with their links to the contacts and companies an earlier run put there (the third trial: all left out)
      const map = idMapOf(dir, copy);
      const deals = lines<{ id: string }>(join(dir, 'deals.ndjson')).slice(0, 2);
      const file = join(tempDir('crm-restore-del-'), 'ids.csv');
      writeFileSync(file, `id\n${deals.map((d) => map.get(`deals/${d.id}`)).join('\n')}\n`);
      const del = await runCrm(['batch', 'deals', file, '--delete', '--yes', '--no-backup'], { env: copy.env() });
      expect(del.code, del.stderr).toBe(0);
      const back = await runCrm(['restore', dir, '--resources', 'deals', '--links', '--yes', '-o', 'json'], {
        env: copy.env(),
      });
      expect(back.code, back.stderr).toBe(0);
      const out = JSON.parse(back.stdout) as { links: Array<{ kind: string; left_out: number; links: number }> };
      for (const k of out.links) expect(k.left_out, k.kind).toBe(k.kind.startsWith('meetings.') ? k.links : 0);
      const again = linksOf(dir, idMapOf(dir, copy)).filter((l) => !l.startsWith('meetings.'));
      expect(linksOf(await snapshotNow(copy))).toEqual(again);
      expect(again).not.toEqual(want); // the two deals have new ids
    } finally {
      await Promise.all([org.close(), copy.close()]);
    }
  });
});
