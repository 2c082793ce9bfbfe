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
