import { describe, expect, it } from 'vitest';
import { RESOURCES } from '../../../src/api/resources.js';
import { cryptoRandom } from '../../../src/sandbox/random.js';
import { SEED_COUNTS, seedStore } from '../../../src/sandbox/seed.js';
import { Store } from '../../../src/sandbox/store.js';

function seeded(seed: number, now = Date.now): Store {
  const store = new Store(cryptoRandom, now);
  seedStore(store, seed);
  return store;
}

describe('seedStore', () => {
  it('is deterministic whatever the clock and the id source', () => {
    expect(seeded(42, () => 0).snapshot()).toEqual(seeded(42, () => 1e12).snapshot());
    expect(seeded(42).snapshot()).not.toEqual(seeded(43).snapshot());
  });

  it('fills the documented counts, with ids of the table prefixes', () => {
    const store = seeded(1);
    for (const def of RESOURCES) {
      expect(store.count(def.name)).toBe(SEED_COUNTS[def.name]);
      for (const row of store.rows(def.name)) expect(String(row.data.id)).toMatch(new RegExp(`^${def.idPrefix}`));
    }
    expect(SEED_COUNTS).toMatchObject({ contacts: 40, companies: 12, deals: 15, recordings: 20, bookings: 8 });
  });

  it('has 14 recordings with transcripts, 4 processing and 2 without audio, in the recording shape', () => {
    const recordings = [...seeded(5).rows('recordings')].map((r) => r.data);
    const by = (s: string) => recordings.filter((r) => r.transcript_status === s);
    expect(by('ready').every((r) => r.has_transcript === true)).toBe(true);
    expect([by('ready').length, by('processing').length, by('no_audio').length]).toEqual([14, 4, 2]);
    expect(recordings.every((r) => r.recording_url === null && r.video_status === 'skipped')).toBe(true);
  });

  it('gives about a quarter of the records to usr_user', () => {
    const contacts = [...seeded(9).rows('contacts')].map((r) => r.data);
    expect(contacts.filter((c) => c.owner_id === 'usr_user')).toHaveLength(10);
  });
});

describe('seedStore with counts (--seed-records)', () => {
  const contacts = (store: Store) => [...store.rows('contacts')].map((r) => r.data);

  it('makes the counts asked, the others as --seed; the first contacts are those of --seed', () => {
    const store = new Store(cryptoRandom, Date.now);
    seedStore(store, 42, { ...SEED_COUNTS, contacts: 5000, pipelines: 5, recordings: 45 });
    expect(store.count('contacts')).toBe(5000);
    expect(store.count('companies')).toBe(SEED_COUNTS.companies);
    expect(contacts(store).slice(0, 40)).toEqual(contacts(seeded(42)));
    expect([...store.rows('pipelines')].map((r) => r.data.name)).toEqual([
      'Sales',
      'Partners',
      'Renewals',
      'Pipeline 4',
      'Pipeline 5',
    ]);
    const status = [...store.rows('recordings')].map((r) => r.data.transcript_status);
    expect(status.filter((s) => s === 'ready')).toHaveLength(14 * 2 + 5);
  });

  it('makes deals=N as asked (bench/snapshot.mjs: 20,000): each id once, each in a pipeline the store holds', () => {
    const store = new Store(cryptoRandom, Date.now);
    seedStore(store, 1, { ...SEED_COUNTS, deals: 20_000 });
    const deals = [...store.rows('deals')].map((r) => r.data);
    expect(deals).toHaveLength(20_000);
    expect(new Set(deals.map((d) => d.id)).size).toBe(20_000);
    const pipelines = new Set([...store.rows('pipelines')].map((r) => r.data.id));
    expect(deals.every((d) => pipelines.has(d.pipeline_id) && /^deal_/.test(String(d.id)))).toBe(true);
    expect(deals.slice(0, SEED_COUNTS.deals)).toEqual([...seeded(1).rows('deals')].map((r) => r.data));
  });

  it('gives unique emails but for the three deliberate pairs, however many; created_at in order, within weeks', () => {
    const store = new Store(cryptoRandom, Date.now);
    seedStore(store, 3, { ...SEED_COUNTS, contacts: 20_000 });
    const all = contacts(store);
    const norm = new Set(all.map((c) => String(c.email).trim().toLowerCase()));
    expect(norm.size).toBe(all.length - 3);
    const times = all.map((c) => Date.parse(String(c.created_at)));
    expect(times.every((t, i) => i === 0 || t > times[i - 1]!)).toBe(true);
    expect(times.at(-1)! - times[0]!).toBeLessThan(30 * 86_400_000);
  });
});
