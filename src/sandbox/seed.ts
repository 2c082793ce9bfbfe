// Deterministic sample data for `--seed N` and `--seed-records` (docs/sandbox.md, "Seed and data
// file"): the same seed and counts give the same records, ids and timestamps, whatever the clock says.
import { DEAL_CONTACT_TYPES, findResource, type ResourceName } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { nearestName } from '../util/nearest.js';
import { ADMIN_USER, BOUND_USER } from './keys.js';
import { mulberry32, pick, randomString, type Random } from './random.js';
import type { Store } from './store.js';

const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Linus',
  'Margaret',
  'Ken',
  'Barbara',
  'Dennis',
  'Frances',
  'John',
  'Radia',
  'Edsger',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Torvalds',
  'Hamilton',
  'Thompson',
  'Liskov',
  'Ritchie',
  'Allen',
  'Backus',
  'Perlman',
  'Dijkstra',
];
const COMPANY = [
  'Acme',
  'Globex',
  'Initech',
  'Umbrella',
  'Hooli',
  'Vandelay',
  'Stark',
  'Wayne',
  'Tyrell',
  'Soylent',
  'Cyberdyne',
  'Aperture',
];
const INDUSTRY = ['software', 'manufacturing', 'retail', 'finance', 'healthcare', 'logistics'];
const STAGES = ['lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost'];
const BASE_TIME = Date.UTC(2026, 0, 5, 9, 0, 0);

export const SEED_COUNTS: Readonly<Record<ResourceName, number>> = {
  contacts: 40,
  companies: 12,
  deals: 15,
  pipelines: 3,
  tasks: 20,
  notes: 10,
  segments: 4,
  interactions: 30,
  meetings: 12,
  recordings: 20,
  bookings: 8,
};

/** How many sample records of each resource; `--seed-records` changes some. */
export type SeedCounts = Readonly<Record<ResourceName, number>>;

/**
 * Contacts that share an email with an earlier one, as a real CRM holds them (the same person
 * imported twice): index → [the earlier index, how its email is written]. 37, 38 and 39 have the
 * names of 1, 2 and 3 already (first and last names repeat every 12 and 36 contacts).
 */
const SHARED_EMAILS = new Map<number, [number, (email: string) => string]>([
  [37, [1, (e) => e.replace(/^./, (c) => c.toUpperCase()).replace('example', 'Example')]],
  [38, [2, (e) => `  ${e} `]],
  [39, [3, (e) => e]],
]);

// one flat string (join): a template literal keeps a tree of its pieces, some 200 bytes a contact at a million
const contactEmail = (i: number) =>
  [FIRST[i % FIRST.length]!.toLowerCase(), '.', LAST[(i * 5) % LAST.length]!.toLowerCase(), i, '@example.com'].join('');

/** The most records of one resource `--seed-records` makes (a million contacts: some 500 MB). */
export const SEED_RECORDS_MAX = 10_000_000;

/** `contacts=100000,deals=300` → `{ contacts: 100000, deals: 300 }`; throws naming the bad part. */
export function parseSeedRecords(spec: string): Partial<Record<ResourceName, number>> {
  const counts: Partial<Record<ResourceName, number>> = {};
  const names = Object.keys(SEED_COUNTS);
  for (const part of spec.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const m = /^([^=\s]+)\s*=\s*(.*)$/.exec(part);
    if (!m) throw new Error(`"${part}": expected RESOURCE=N, e.g. contacts=100000`);
    const [, name, text] = m as unknown as [string, string, string];
    if (!names.includes(name)) {
      const near = nearestName(name, names);
      throw new Error(
        `"${part}": no resource "${name}" (${near ? `did you mean ${near}?` : `resources: ${names.join(', ')}`})`,
      );
    }
    const n = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!(n >= 1 && n <= SEED_RECORDS_MAX))
      throw new Error(`"${part}": N must be a whole number from 1 to ${SEED_RECORDS_MAX}`);
    if (counts[name as ResourceName] !== undefined) throw new Error(`"${part}": ${name} given twice`);
    counts[name as ResourceName] = n;
  }
  return counts;
}

type Made = Partial<Record<ResourceName, ApiRecord[]>>;
const at = (ms: number) => new Date(BASE_TIME + ms).toISOString();
const idIn = (random: Random, made: Made, resource: ResourceName) => pick(random, made[resource]!).id;

/** How the i-th sample record of each resource is made, in the order they are made (later ones point at earlier ones). */
const MAKERS: { [R in ResourceName]: (i: number, random: Random, made: Made) => ApiRecord } = {
  companies: (i, random) => ({
    name: `${COMPANY[i % COMPANY.length]} ${i < COMPANY.length ? 'Inc' : 'Group'}`,
    domain: `${COMPANY[i % COMPANY.length]!.toLowerCase()}.example`,
    industry: pick(random, INDUSTRY),
    founded_year: 1950 + Math.floor(random() * 70),
  }),
  contacts: (i, random, made) => {
    const first = FIRST[i % FIRST.length]!;
    const last = LAST[(i * 5) % LAST.length]!;
    const shared = SHARED_EMAILS.get(i);
    return {
      email: shared ? shared[1](contactEmail(shared[0])) : contactEmail(i),
      first_name: first,
      last_name: last,
      company_id: idIn(random, made, 'companies'),
      phone: `+1555${String(1000000 + Math.floor(random() * 8999999))}`,
      title: pick(random, ['CEO', 'CTO', 'VP Sales', 'Engineer', 'Buyer']),
      source: pick(random, ['web', 'referral', 'event', 'import']),
      // a number and a boolean, from the index (not drawn: the records after them stay as they were)
      score: (i * 37) % 101,
      vip: i % 7 === 2,
    };
  },
  pipelines: (i) => ({ name: ['Sales', 'Partners', 'Renewals'][i] ?? `Pipeline ${i + 1}`, stages: STAGES }),
  deals: (i, random, made) => ({
    name: `${pick(random, COMPANY)} deal ${i + 1}`,
    amount: 1000 * (1 + Math.floor(random() * 100)),
    stage: pick(random, STAGES),
    pipeline_id: idIn(random, made, 'pipelines'),
  }),
  tasks: (i, random) => ({
    title: `Follow up ${i + 1}`,
    status: pick(random, ['open', 'done']),
    due_date: at((i + 1) * 86_400_000).slice(0, 10),
  }),
  notes: (i, random) => ({
    body: `Call notes #${i + 1}: ${pick(random, ['budget approved', 'needs a demo', 'send pricing'])}`,
  }),
  segments: (i) => ({
    name: ['Customers', 'Prospects', 'Churn risk', 'Newsletter'][i] ?? `Segment ${i + 1}`,
    description: 'Sample segment',
  }),
  interactions: (i, random, made) => ({
    type: pick(random, ['call', 'email', 'meeting']),
    direction: pick(random, ['inbound', 'outbound']),
    sentiment: pick(random, ['positive', 'neutral', 'negative']),
    source: pick(random, ['gmail', 'phone', 'calendar']),
    title: `Interaction ${i + 1}`,
    summary: 'Sample interaction',
    company_ids: [idIn(random, made, 'companies')],
    contact_ids: [idIn(random, made, 'contacts')],
    interaction_date: at(i * 3_600_000),
  }),
  meetings: (i, random, made) => ({
    title: `Meeting ${i + 1}`,
    starts_at: at(i * 7_200_000),
    deal_id: i % 3 === 0 ? idIn(random, made, 'deals') : null,
    company_id: i % 4 === 0 ? idIn(random, made, 'companies') : null,
  }),
  recordings: (i, random, made) => {
    // of each 20: 14 with transcripts, 4 still processing, 2 without audio
    const status = i % 20 < 14 ? 'ready' : i % 20 < 18 ? 'processing' : 'no_audio';
    const meetings = made.meetings!;
    return {
      title: `Recording ${i + 1}`,
      meeting_id: meetings[i % meetings.length]!.id,
      started_at: at(i * 5_400_000),
      duration_seconds: status === 'no_audio' ? 0 : 300 + Math.floor(random() * 3000),
      has_transcript: status === 'ready',
      transcript_status: status,
      transcript_url: null,
      recording_url: null,
      video_status: 'skipped',
    };
  },
  bookings: (i, random) => ({
    title: `Booking ${i + 1}`,
    starts_at: at(i * 86_400_000),
    status: pick(random, ['confirmed', 'cancelled']),
  }),
};

/**
 * Fills the (empty) store with the sample data of `seed`, `counts` of each resource (at least 1:
 * later resources point at earlier ones). Records beyond SEED_COUNTS are a second apart, not 37
 * minutes: a million contacts span 12 days, not 70 years.
 */
export function seedStore(store: Store, seed: number, counts: SeedCounts = SEED_COUNTS): void {
  const random = mulberry32(seed >>> 0);
  let clock = 0;
  const made: Made = {};
  for (const [resource, make] of Object.entries(MAKERS) as Array<[ResourceName, (typeof MAKERS)[ResourceName]]>) {
    made[resource] = Array.from({ length: counts[resource] }, (_, i) => {
      const fields = make(i, random, made);
      const time = at((clock += i < SEED_COUNTS[resource] ? 37 * 60_000 : 1000));
      // about a quarter of everything belongs to the user-bound key's user
      const owner_id = i % 4 === 3 ? BOUND_USER : ADMIN_USER;
      const data = {
        id: randomString(random, 14, findResource(resource)!.idPrefix),
        ...fields,
        owner_id,
        created_at: time,
        updated_at: time,
      };
      store.insert(resource, data);
      return data;
    });
  }
  seedLinks(store, random, made);
}

function seedLinks(store: Store, random: Random, made: Made): void {
  const r = made as Required<Made>;
  const id = (x: ApiRecord) => x.id as string;
  let n = 0;
  const own = () => ({ id: randomString(random, 14, 'lnk_'), created_at: at(++n * 60_000) });
  for (const deal of r.deals.slice(0, 8)) {
    store.link('deals', id(deal), 'contacts', 'contacts', id(pick(random, r.contacts)), {
      ...own(),
      type: pick(random, DEAL_CONTACT_TYPES),
    });
    store.link('deals', id(deal), 'companies', 'companies', id(pick(random, r.companies)), own());
  }
  for (const note of r.notes.slice(0, 5))
    store.link('notes', id(note), 'records', 'contacts', id(pick(random, r.contacts)), {
      ...own(),
      record_type: 'contact',
    });
  for (const segment of r.segments) {
    for (let i = 0; i < 5; i++)
      store.link('segments', id(segment), 'members', 'contacts', id(pick(random, r.contacts)), own());
  }
}
