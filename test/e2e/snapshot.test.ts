// `crm snapshot DIR` against a seeded sandbox: every collection's file holds exactly what the API
// lists (ids and fields), --resources narrows it, and kill -9 at seeded points then the same command
// leaves every record once in each file, the manifest complete only at the end.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_RESOURCES } from '../../src/commands/snapshot/run.js';
import { interruptOnceWritten, killAtPoints } from '../helpers/kill-points.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({
    seed: 5,
    seedRecords: { contacts: 340, deals: 120 },
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
  });
});
afterAll(() => t.close());

async function listAll(resource: string): Promise<unknown[]> {
  const all: unknown[] = [];
  let cursor: string | null = null;
  for (;;) {
    const res = await fetch(`${t.sb.baseUrl}/${resource}?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const body = (await res.json()) as {
      data: unknown[];
      page_info: { end_cursor: string | null; has_next_page: boolean };
    };
    all.push(...body.data);
    if (!body.page_info.has_next_page) return all;
    cursor = body.page_info.end_cursor;
  }
}
const readNdjson = (file: string): unknown[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown);
/** bytes in the folder's collection files, partial or finished */
/** bytes the snapshot files hold now; a file renamed between the listing and its stat (a partial finished) counts 0 */
const written = (dir: string): number =>
  (existsSync(dir) ? readdirSync(dir) : [])
    .filter((f) => f.includes('.ndjson'))
    .reduce((sum, f) => sum + (statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? 0), 0);
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;

/** A snapshot of the contacts stopped by Ctrl-C once it has written something (slowed so a page is under way): its folder. */
async function contactsInterrupted(): Promise<string> {
  await t.control('/faults', { latency_ms: 15 });
  const dir = tempDir('crm-snapshot-');
  try {
    await interruptOnceWritten(['snapshot', dir, '--resources', 'contacts'], t.env(), dir, () => written(dir));
  } finally {
    await t.control('/faults', { latency_ms: 0 });
  }
  return dir;
}

describe('crm snapshot', () => {
  it('writes every collection exactly as the API lists it, and a complete manifest', async () => {
    const dir = join(tempDir('crm-snapshot-'), 'all');
    const r = await runCrm(['snapshot', dir], { env: t.env(), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    // not on a terminal the default output is JSON: the manifest
    for (const name of SNAPSHOT_RESOURCES) {
      const api = await listAll(name);
      expect(readNdjson(join(dir, `${name}.ndjson`)), name).toEqual(api);
      expect(manifest(dir).collections[name]).toEqual({ file: `${name}.ndjson`, records: api.length, complete: true });
    }
    expect((await listAll('contacts')).length).toBe(340);
    const m = manifest(dir);
    expect(JSON.parse(r.stdout)).toEqual(m);
    expect(m).toMatchObject({ base_url: t.sb.baseUrl, complete: true });
    expect(Date.parse(m.finished_at)).toBeGreaterThanOrEqual(Date.parse(m.started_at));
    expect(m.left_out.map((l: { what: string }) => l.what)).toEqual(['links', 'transcripts']);
    expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('--resources contacts,deals writes those two and says the others were left out', async () => {
    const dir = tempDir('crm-snapshot-');
    const r = await runCrm(['snapshot', dir, '--resources', 'contacts,deals', '-o', 'json'], {
      env: t.env(),
      timeoutMs: 60_000,
    });
    expect(r.code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['contacts.ndjson', 'deals.ndjson', 'manifest.json']);
    expect(readNdjson(join(dir, 'deals.ndjson'))).toEqual(await listAll('deals'));
    const m = JSON.parse(r.stdout) as Record<string, any>;
    expect(m).toEqual(manifest(dir));
    expect(Object.keys(m.collections)).toEqual(['contacts', 'deals']);
    expect(m.left_out).toContainEqual({ what: 'companies', reason: 'not in --resources' });
  });

  it('a finished snapshot run again reads nothing, says so and how to take a fresh one; its manifest unchanged', async () => {
    const dir = tempDir('crm-snapshot-');
    const first = await runCrm(['snapshot', dir, '--resources', 'contacts,deals', '-o', 'json'], {
      env: t.env(),
      timeoutMs: 60_000,
    });
    expect(first.code, first.stderr).toBe(0);
    const before = readFileSync(join(dir, 'manifest.json'), 'utf8');
    const contacts = readFileSync(join(dir, 'contacts.ndjson'), 'utf8');
    // a record made since: a refresh in place would mix two times in one folder
    const made = await fetch(`${t.sb.baseUrl}/contacts`, {
      method: 'POST',
      headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'since.snapshot@example.com' }),
    });
    expect(made.status).toBe(201);
    const since = ((await t.control('/stats')) as { requests: number }).requests;
    const again = await runCrm(['snapshot', dir, '--resources', 'contacts,deals', '-o', 'table'], { env: t.env() });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('already holds a complete snapshot');
    expect(again.stderr).toContain('nothing read. A fresh snapshot needs another folder');
    expect(again.stderr).not.toContain('Snapshot complete');
    const log = (await t.control(`/requests?since=${since}`)) as Array<{ method: string; path: string }>;
    expect(log.filter((e) => e.method === 'GET' && /\/(contacts|deals)\b/.test(e.path))).toEqual([]);
    expect(readFileSync(join(dir, 'manifest.json'), 'utf8')).toBe(before);
    expect(readFileSync(join(dir, 'contacts.ndjson'), 'utf8')).toBe(contacts);
    // -o json: the manifest as it is
    const json = await runCrm(['snapshot', dir, '--resources', 'contacts,deals', '-o', 'json'], { env: t.env() });
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(before));
    // asked for more than it holds (another collection): that is read, the rest kept, and said
    const more = await runCrm(['snapshot', dir, '--resources', 'contacts,deals,tasks', '-o', 'table'], {
      env: t.env(),
    });
    expect(more.code, more.stderr).toBe(0);
    expect(more.stderr).toMatch(
      /adding to the complete snapshot begun \S+: contacts, deals \(\d+ records\) already saved, kept as they were/,
    );
    expect(readNdjson(join(dir, 'tasks.ndjson'))).toEqual(await listAll('tasks'));
  });

  it('--resources with an unknown name is a usage error (exit 2) before anything is written', async () => {
    const dir = join(tempDir('crm-snapshot-'), 'none');
    const r = await runCrm(['snapshot', dir, '--resources', 'contacts,people'], { env: t.env() });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"people"');
    expect(existsSync(dir)).toBe(false);
  });

  it('killed (-9) at seeded points and run again: every record once per file, complete only at the end', async () => {
    await t.control('/faults', { latency_ms: 15 });
    try {
      const dir = tempDir('crm-snapshot-');
      const args = ['snapshot', dir, '--resources', 'contacts,deals,companies'];
      // seeded points: after a run has written something more, how long it lives on before kill -9
      const points = [0, 7, 23, 3, 41, 12, 30, 18];
      const finished = () => ['contacts', 'deals', 'companies'].every((n) => existsSync(join(dir, `${n}.ndjson`)));
      const kills = await killAtPoints(args, t.env(), points, dir, () => written(dir), finished);
      // the snapshot is a few pages: on a fast machine it can finish before every point is used, but never untested
      expect(kills).toBeGreaterThanOrEqual(3);
      for (const name of ['contacts', 'deals', 'companies']) {
        const records = readNdjson(join(dir, `${name}.ndjson`)) as Array<{ id: string }>;
        expect(new Set(records.map((r) => r.id)).size, name).toBe(records.length);
        expect(records, name).toEqual(await listAll(name));
      }
      expect(manifest(dir).complete).toBe(true);
      expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
    } finally {
      await t.control('/faults', { latency_ms: 0 });
    }
  }, 120_000);

  it('Ctrl-C stops with exit 130 and says how to resume; the same command says it resumes, and finishes', async () => {
    const dir = await contactsInterrupted();
    const again = await runCrm(['snapshot', dir, '--resources', 'contacts'], { env: t.env(), timeoutMs: 60_000 });
    expect(again.code).toBe(0);
    // the rerun says it resumed, and from where
    expect(again.stderr).toMatch(/^resuming the snapshot begun \d{4}-/m);
    expect(again.stderr).toMatch(/^contacts: \d+ records? already saved by the earlier run; reading on from there$/m);
    expect(readNdjson(join(dir, 'contacts.ndjson'))).toEqual(await listAll('contacts'));
  });

  it('a saved cursor the server refuses (expired) on resume: that collection is read again from its start, each record once', async () => {
    const dir = await contactsInterrupted();
    // the saved position, as a server that forgot its cursors would see it
    const statePath = join(dir, '.contacts.ndjson.state');
    const state = JSON.parse(readFileSync(statePath, 'utf8')) as { at: { cursor: string | null } };
    expect(typeof state.at.cursor).toBe('string');
    writeFileSync(statePath, JSON.stringify({ ...state, at: { cursor: 'expired-cursor' } }));
    const again = await runCrm(['snapshot', dir, '--resources', 'contacts', '-o', 'json'], {
      env: t.env(),
      timeoutMs: 60_000,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('contacts: the server refused the cursor the earlier run saved');
    const api = await listAll('contacts');
    expect(readNdjson(join(dir, 'contacts.ndjson'))).toEqual(api);
    expect(manifest(dir)).toMatchObject({ complete: true, collections: { contacts: { records: api.length } } });
  });

  it('a server that cannot be reached is exit 8, the manifest not complete', async () => {
    const dir = tempDir('crm-snapshot-');
    const r = await runCrm(['snapshot', dir, '--max-retries', '0'], {
      env: t.env('admin', { CRM_BASE_URL: 'http://127.0.0.1:9/api/v2' }),
    });
    expect(r.code, r.stderr).toBe(8);
    expect(manifest(dir).complete).toBe(false);
  });
});
