// A collection (or --links, --transcripts) added to a finished snapshot (issue 28): the earlier run's parts are
// kept as they were, and the manifest lists what the folder holds: never a kept collection, kind of link or the
// transcripts under `left_out` (they were listed there while the plan said they were kept).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SNAPSHOT_RESOURCES } from '../../src/commands/snapshot/run.js';
import { LINK_KINDS } from '../../src/api/snapshot-links.js';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({
    seed: 8,
    seedRecords: { contacts: 30, companies: 10, deals: 12, recordings: 4 },
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
  });
});
afterAll(() => t.close());

type Manifest = {
  complete: boolean;
  collections: Record<string, { file: string; records: number; complete: boolean }>;
  links?: Record<string, unknown>;
  transcripts?: { complete: boolean };
  left_out: Array<{ what: string; reason: string }>;
};
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
const snapshot = async (dir: string, ...args: string[]) => {
  const r = await runCrm(['snapshot', dir, ...args, '-o', 'json'], { env: t.env(), timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual(manifest(dir));
  return r;
};
const leftOut = (m: Manifest) => m.left_out.map((l) => l.what);
/** the collections a manifest lists, held or left out: each exactly once */
const eachOnce = (m: Manifest) =>
  expect(
    [...Object.keys(m.collections), ...leftOut(m).filter((w) => SNAPSHOT_RESOURCES.includes(w as never))].sort(),
  ).toEqual([...SNAPSHOT_RESOURCES].sort());

describe('crm snapshot: adding to a finished snapshot', () => {
  it('another collection: both are listed as held, neither as left out', async () => {
    const dir = tempDir('crm-snapshot-');
    await snapshot(dir, '--resources', 'contacts');
    const r = await snapshot(dir, '--resources', 'contacts,companies');
    expect(r.stderr).toMatch(/contacts \(30 records\) already saved, kept as they were/);
    const m = manifest(dir);
    expect(m.complete).toBe(true);
    expect(Object.keys(m.collections).sort()).toEqual(['companies', 'contacts']);
    expect(m.collections.contacts).toEqual({ file: 'contacts.ndjson', records: 30, complete: true });
    expect(leftOut(m)).not.toContain('contacts');
    expect(leftOut(m)).not.toContain('companies');
    eachOnce(m);

    // a third run naming only one of them keeps the other as held too
    await snapshot(dir, '--resources', 'deals');
    const third = manifest(dir);
    expect(Object.keys(third.collections).sort()).toEqual(['companies', 'contacts', 'deals']);
    eachOnce(third);
  });

  it('links and transcripts taken earlier stay listed (not left out) when a later run does not ask for them', async () => {
    const dir = tempDir('crm-snapshot-');
    await snapshot(dir, '--resources', 'deals,recordings', '--links', '--transcripts');
    const first = manifest(dir);
    expect(Object.keys(first.links ?? {})).toEqual(['deals.contacts', 'deals.companies']);
    expect(first.transcripts?.complete).toBe(true);

    await snapshot(dir, '--resources', 'contacts');
    const m = manifest(dir);
    expect(m.complete).toBe(true);
    expect(Object.keys(m.collections).sort()).toEqual(['contacts', 'deals', 'recordings']);
    expect(m.links).toEqual(first.links);
    expect(m.transcripts).toEqual(first.transcripts);
    expect(leftOut(m)).not.toContain('links');
    expect(leftOut(m)).not.toContain('transcripts');
    expect(leftOut(m)).not.toContain('deals.contacts');
    eachOnce(m);
    // the kinds not held are each left out, saying why
    const kinds = LINK_KINDS.filter((k) => k.parent !== 'deals');
    for (const k of kinds)
      expect(m.left_out).toContainEqual({ what: k.key, reason: `links of ${k.parent}, which are not in --resources` });
  });

  it('--links or --transcripts added later: the collections kept are not left out', async () => {
    const dir = tempDir('crm-snapshot-');
    await snapshot(dir, '--resources', 'contacts,deals');
    await snapshot(dir, '--resources', 'deals', '--links');
    const m = manifest(dir);
    expect(Object.keys(m.collections).sort()).toEqual(['contacts', 'deals']);
    expect(Object.keys(m.links ?? {})).toEqual(['deals.contacts', 'deals.companies']);
    expect(leftOut(m)).not.toContain('contacts');
    expect(leftOut(m)).not.toContain('links');
    eachOnce(m);

    await snapshot(dir, '--resources', 'recordings', '--transcripts');
    const later = manifest(dir);
    expect(Object.keys(later.collections).sort()).toEqual(['contacts', 'deals', 'recordings']);
    expect(later.links).toEqual(m.links);
    expect(later.transcripts?.complete).toBe(true);
    expect(leftOut(later)).not.toContain('transcripts');
    eachOnce(later);
  });
});
