import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AutoSaver, loadDataFile, saveDataFile } from '../../../src/sandbox/data-file.js';
import { mulberry32 } from '../../../src/sandbox/random.js';
import { seedStore } from '../../../src/sandbox/seed.js';
import { Store, type StoreSnapshot } from '../../../src/sandbox/store.js';
import { tempDir } from '../../helpers/temp.js';

const tmp = () => tempDir('crm-sb-data-');

function seeded(): Store {
  const store = new Store(mulberry32(1), () => Date.UTC(2026, 0, 1));
  seedStore(store, 42);
  return store;
}

describe('data file', () => {
  it('saves atomically and loads the same store back', async () => {
    const dir = tmp();
    const file = path.join(dir, 'store.json');
    const store = seeded();
    store.create('contacts', { email: 'new@x.y' }, 'usr_admin');
    await saveDataFile(file, store.snapshot());
    expect(fs.readdirSync(dir)).toEqual(['store.json']);
    const loaded = loadDataFile(file)!;
    const again = new Store(mulberry32(2), Date.now);
    again.restore(loaded);
    expect(again.snapshot()).toEqual(store.snapshot());
    expect(again.count('contacts')).toBe(41);
  });

  it('keeps cursor order after a reload: new records sort after the loaded ones', async () => {
    const file = path.join(tmp(), 'store.json');
    const store = seeded();
    await saveDataFile(file, store.snapshot());
    const again = new Store(mulberry32(2), Date.now);
    again.restore(loadDataFile(file)!);
    const created = again.create('contacts', { email: 'z@z.z' }, 'usr_admin');
    const rows = [...again.rows('contacts')];
    expect(rows.at(-1)!.data.id).toBe(created.id);
    expect(rows.at(-1)!.seq).toBeGreaterThan(rows.at(-2)!.seq);
  });

  it('a missing file is undefined; a malformed one is an error naming the file', () => {
    const dir = tmp();
    expect(loadDataFile(path.join(dir, 'none.json'))).toBeUndefined();
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, '{"format":');
    expect(() => loadDataFile(bad)).toThrow(`data file ${bad}: not valid JSON`);
    fs.writeFileSync(bad, JSON.stringify({ format: 'other' }));
    expect(() => loadDataFile(bad)).toThrow(/not a sandbox data file/);
    const snapshot: StoreSnapshot = {
      format: 'crm-sandbox-store/1',
      seq: 1,
      records: { contacts: [{ email: 'no id' }] },
      links: [],
    };
    fs.writeFileSync(bad, JSON.stringify(snapshot));
    expect(() => loadDataFile(bad)).toThrow(/records.contacts\[0\]/);
    fs.writeFileSync(bad, JSON.stringify({ ...snapshot, records: { widgets: [] } }));
    expect(() => loadDataFile(bad)).toThrow(/unknown resource "widgets"/);
    const entry = {
      api_key_sha256: 'ab',
      key: 'k',
      fingerprint: 'fp',
      stored_at: 1,
      response: { status: 201, headers: { 'X-Request-Id': 'req_1' }, body: {} },
    };
    fs.writeFileSync(
      bad,
      JSON.stringify({ ...snapshot, records: {}, idempotency: [entry, { ...entry, stored_at: 'yesterday' }] }),
    );
    expect(() => loadDataFile(bad)).toThrow(/idempotency\[1\] is not a valid idempotency entry/);
    fs.writeFileSync(bad, JSON.stringify({ ...snapshot, records: {}, idempotency: {} }));
    expect(() => loadDataFile(bad)).toThrow(/"idempotency" must be an array/);
    fs.writeFileSync(bad, JSON.stringify({ ...snapshot, records: {}, idempotency: [entry] }));
    expect(loadDataFile(bad)!.idempotency).toEqual([entry]);
  });

  it('AutoSaver saves once after changes and on flush', async () => {
    const file = path.join(tmp(), 'auto.json');
    const store = seeded();
    const saver = new AutoSaver(file, () => store.snapshot(), 5);
    saver.changed();
    saver.changed();
    for (let i = 0; i < 200 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 10));
    expect(loadDataFile(file)!.records.contacts).toHaveLength(40);
    store.create('contacts', { email: 'a@b.c' }, 'usr_admin');
    await saver.flush();
    expect(loadDataFile(file)!.records.contacts).toHaveLength(41);
  });

  it('AutoSaver.close saves, and a change after it is never saved (another sandbox may own the file by then)', async () => {
    const file = path.join(tmp(), 'closed.json');
    const store = seeded();
    const saver = new AutoSaver(file, () => store.snapshot(), 1);
    await saver.close();
    expect(loadDataFile(file)!.records.contacts).toHaveLength(40);
    store.create('contacts', { email: 'late@b.c' }, 'usr_admin');
    saver.changed();
    await new Promise((r) => setTimeout(r, 30));
    expect(loadDataFile(file)!.records.contacts).toHaveLength(40);
  });
});
