// Two `crm snapshot` runs on one folder at once (issue 28): both appended every page to the same files
// (2,500 lines for 1,500 records, a manifest saying complete, then "a bug in crm"). The folder has one
// writer at a time: the other run is refused, exit 2, naming the process that has it, and writes nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, startCrm } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import { contact, shiftingList, startHostile, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());

describe('crm snapshot: one writer a folder', () => {
  it('two runs at once: one writes the snapshot, the other is refused (exit 2) naming it; every record once', async () => {
    const list = shiftingList(Array.from({ length: 1500 }, (_, i) => contact(i)));
    // slow pages: the first run is still reading when the second starts
    h.route('GET', '/contacts', async (req, res, ctx) => {
      await sleep(60);
      return list.handler(req, res, ctx);
    });
    const dir = tempDir('crm-hostile-snapshot-');
    const args = ['snapshot', dir, '--resources', 'contacts', '-o', 'json'];
    const runs = [startCrm(args, { env: h.env() }), startCrm(args, { env: h.env() })];
    const results = await Promise.all(runs.map((c) => collect(c, { timeoutMs: 30_000 })));

    const codes = results.map((r) => r.code);
    expect([...codes].sort(), results.map((r) => r.stderr).join('\n---\n')).toEqual([0, 2]);
    const [winner, refused] = codes[0] === 0 ? [0, 1] : [1, 0];
    expect(results[refused]!.stderr).toContain(
      `another crm (process ${runs[winner]!.pid}) is writing a snapshot into ${dir} right now; nothing was written`,
    );
    expect(results[refused]!.stderr).toContain(`Lock: ${join(dir, '.snapshot.lock')}`);
    expect(results[refused]!.stderr).not.toMatch(/unexpected failure|a bug in crm/);
    expect(results[refused]!.stdout).toBe('');

    const ids = readFileSync(join(dir, 'contacts.ndjson'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).toEqual(list.records.map((r) => r.id));
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;
    expect(m).toMatchObject({ complete: true, collections: { contacts: { records: 1500 } } });
    // the refused run read nothing: the collection's first page was asked for once
    expect(h.log.filter((r) => r.query.get('cursor') === null)).toHaveLength(1);

    // once the first is done the folder is free again: the same command reads nothing more and exits 0
    const again = await collect(startCrm(args, { env: h.env() }), { timeoutMs: 30_000 });
    expect(again.code, again.stderr).toBe(0);
  });
});
