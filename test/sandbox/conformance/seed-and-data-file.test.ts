// docs/sandbox.md "Seed and data file" (deterministic sample data and counts; keys derived from the
// seed; data file loaded at start, saved atomically on close; malformed file rejected; idempotency
// keys kept across a restart, 24 h) and
// "Starting it" (keys random each start without a seed).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { RESOURCES } from '../../../src/api/resources.js';
import {
  call,
  control,
  create,
  createBody,
  expectError,
  expectStatus,
  listAll,
  startSandbox,
  tempDir,
  uniqueEmail,
  uniqueKey,
  withSandbox,
  ROOMY,
  type SandboxHandle,
} from '../helpers.js';

async function snapshot(sb: SandboxHandle): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const r of RESOURCES) out[r.name] = await listAll(sb, r.name);
  return out;
}

const SEED_COUNTS: Record<string, number> = {
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

describe('seed determinism', () => {
  test('two sandboxes with the same seed have the same keys and the same data', async () => {
    const a = await startSandbox({ seed: 7, ...ROOMY });
    const b = await startSandbox({ seed: 7, ...ROOMY });
    try {
      expect(b.keys).toEqual(a.keys);
      expect(a.baseUrl).not.toBe(b.baseUrl); // two ports
      const [sa, sbb] = [await snapshot(a), await snapshot(b)];
      expect(sbb).toEqual(sa);
      // links and associations of the seed too
      const deals = sa.deals as Array<Record<string, any>>;
      for (const d of deals.slice(0, 5)) {
        const la = await call(a, 'GET', `/deals/${d.id}/contacts`);
        const lb = await call(b, 'GET', `/deals/${d.id}/contacts`);
        expect(lb.body.data).toEqual(la.body.data);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('the same seed gives the same transcripts', async () => {
    const a = await startSandbox({ seed: 7, ...ROOMY });
    const b = await startSandbox({ seed: 7, ...ROOMY });
    try {
      const recs = (await listAll(a, 'recordings')).filter((r) => r.has_transcript);
      for (const r of recs.slice(0, 3)) {
        const ua = (await call(a, 'GET', `/recordings/${r.id}`)).body.data.transcript_url;
        const ub = (await call(b, 'GET', `/recordings/${r.id}`)).body.data.transcript_url;
        expect(ua).not.toBe(ub); // tokens are random
        const ta = await call(a, 'GET', ua, { key: null });
        const tb = await call(b, 'GET', ub, { key: null });
        expect(tb.body).toEqual(ta.body);
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('a different seed gives different keys and data', async () => {
    const a = await startSandbox({ seed: 7, ...ROOMY });
    const b = await startSandbox({ seed: 8, ...ROOMY });
    try {
      expect(b.keys.admin).not.toBe(a.keys.admin);
      expect(await snapshot(b)).not.toEqual(await snapshot(a));
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('without a seed, keys are random each start (and keep their forms)', async () => {
    const a = await startSandbox(ROOMY);
    const b = await startSandbox(ROOMY);
    try {
      for (const k of ['admin', 'readonly', 'user', 'v1'] as const) expect(b.keys[k]).not.toBe(a.keys[k]);
      expect(a.keys.admin).toMatch(/^service_live_/);
      expect(a.keys.v1).toMatch(/^service_pk_/);
    } finally {
      await a.close();
      await b.close();
    }
  });

  test('the seed has the documented counts; recordings 14 ready, 4 processing, 2 without audio; about a quarter owned by usr_user', async () => {
    await withSandbox({ seed: 42 }, async (sb) => {
      const stats = (await control(sb, 'GET', '/stats')).body;
      expect(stats.records).toEqual(SEED_COUNTS);
      const snap = await snapshot(sb);
      for (const [name, n] of Object.entries(SEED_COUNTS)) expect(snap[name], name).toHaveLength(n);
      const recs = snap.recordings as Array<Record<string, any>>;
      const by = (s: string) => recs.filter((r) => r.transcript_status === s).length;
      expect([by('ready'), by('processing'), by('no_audio')]).toEqual([14, 4, 2]);
      expect(recs.filter((r) => r.has_transcript)).toHaveLength(14);
      const all = Object.values(snap).flat() as Array<Record<string, any>>;
      const share = all.filter((r) => r.owner_id === 'usr_user').length / all.length;
      expect(share).toBeGreaterThan(0.15);
      expect(share).toBeLessThan(0.35);
      for (const r of all) expect(['usr_admin', 'usr_user']).toContain(r.owner_id);
    });
  });
});

describe('data file', () => {
  test('saved on close, reloaded on start', async () => {
    const dir = tempDir('crm-conf-data-');
    const file = path.join(dir, 'store.json');
    const a = await startSandbox({ seed: 3, dataFile: file, ...ROOMY });
    let created: Record<string, any>;
    let before: Record<string, unknown[]>;
    try {
      created = await create(a, 'contacts', { first_name: 'Persisted' });
      const seededDeal = (await listAll(a, 'deals'))[0]!;
      expectStatus(await call(a, 'PATCH', `/deals/${seededDeal.id}`, { body: { stage: 'persisted' } }), 200);
      const doomed = (await listAll(a, 'tasks'))[0]!;
      expectStatus(await call(a, 'DELETE', `/tasks/${doomed.id}`), 200);
      before = await snapshot(a);
    } finally {
      await a.close();
    }
    expect(fs.existsSync(file)).toBe(true);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).records.contacts).toContainEqual(created!);
    expect(
      fs.readdirSync(dir).filter((f) => f !== 'store.json'),
      'no temp files left behind',
    ).toEqual([]);
    // spec Authentication rule 2: only a hash of a key is ever stored
    const saved = fs.readFileSync(file, 'utf8');
    for (const k of Object.values(a.keys)) expect(saved).not.toContain(k);

    const b = await startSandbox({ dataFile: file, ...ROOMY });
    try {
      const got = await call(b, 'GET', `/contacts/${created.id}`, { key: b.keys.admin });
      expectStatus(got, 200);
      expect(got.body.data).toEqual(created);
      expect(await snapshot(b)).toEqual(before);
    } finally {
      await b.close();
    }
  });

  test('a missing data file starts (seeded) and is created on close', async () => {
    const dir = tempDir('crm-conf-data-');
    const file = path.join(dir, 'new.json');
    const sb = await startSandbox({ seed: 42, dataFile: file, ...ROOMY });
    try {
      expect((await control(sb, 'GET', '/stats')).body.records.contacts).toBe(40);
    } finally {
      await sb.close();
    }
    expect(fs.existsSync(file)).toBe(true);
  });

  test('the file is replaced atomically: the old content stays whole until the rename', async () => {
    const dir = tempDir('crm-conf-data-');
    const file = path.join(dir, 'store.json');
    const a = await startSandbox({ seed: 5, dataFile: file, ...ROOMY });
    await a.close();
    const inode = fs.statSync(file).ino;
    const b = await startSandbox({ dataFile: file, ...ROOMY });
    let company: Record<string, any>;
    try {
      company = await create(b, 'companies');
    } finally {
      await b.close();
    }
    // a rename over the file gives it a new inode; an in-place rewrite would keep it
    expect(fs.statSync(file).ino).not.toBe(inode);
    expect(JSON.parse(fs.readFileSync(file, 'utf8')).records.companies).toContainEqual(company!);
    expect(fs.readdirSync(dir)).toEqual(['store.json']);
  });

  test.each([
    ['not JSON', '{"contacts": [ '],
    ['a JSON array', '[1, 2, 3]'],
    ['a JSON string', '"hello"'],
    ['empty', ''],
  ])('a malformed data file (%s) is rejected at start', async (_label, content) => {
    const dir = tempDir('crm-conf-data-');
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, content);
    await expect(startSandbox({ dataFile: file, ...ROOMY })).rejects.toThrow();
    expect(fs.readFileSync(file, 'utf8')).toBe(content); // not overwritten
  });

  test('a malformed keys file is rejected at start, naming the entry', async () => {
    const dir = tempDir('crm-conf-keys-');
    const file = path.join(dir, 'keys.json');
    fs.writeFileSync(
      file,
      JSON.stringify([
        {
          key: 'service_live_fine_fine_fine',
          version: 2,
          scopes: ['contacts:read'],
          access: 'organization',
          user: 'usr_a',
        },
        { key: 42 },
      ]),
    );
    await expect(startSandbox({ keysFile: file, ...ROOMY })).rejects.toThrow(/1|key/);
  });
});

// Spec "Limits" rule 4 and docs/sandbox.md "Idempotency": a service keeps its keys across a
// restart, so the sandbox saves the answered ones in the data file with the records.
describe('idempotency keys across a restart', () => {
  const DAY = 24 * 60 * 60 * 1000;
  const T0 = Date.UTC(2026, 0, 5, 9);
  /** Seed 9 keeps the API keys the same across starts; the clock is fixed at `at`. */
  const start = (file: string, at: number) => startSandbox({ seed: 9, dataFile: file, now: () => at, ...ROOMY });
  const idem = (key: string) => ({ headers: { 'Idempotency-Key': key } });
  const saved = (file: string) =>
    JSON.parse(fs.readFileSync(file, 'utf8')) as { idempotency?: Array<{ key: string; stored_at: number }> };
  const count = async (sb: SandboxHandle, email: unknown) =>
    (await call(sb, 'GET', '/contacts', { query: { email: String(email) } })).body.data.length;

  test('same key + same body after a restart → the cached response (Idempotent-Replayed), not a second record; another body → 422', async () => {
    const file = path.join(tempDir('crm-conf-idem-'), 'store.json');
    const key = uniqueKey();
    const body = createBody('contacts');
    const batchKey = uniqueKey('batch');
    const batch = [createBody('contacts'), createBody('contacts')];
    const a = await start(file, T0);
    let first, firstBatch;
    try {
      first = await call(a, 'POST', '/contacts', { body, ...idem(key) });
      expectStatus(first, 201);
      firstBatch = await call(a, 'POST', '/contacts/batch', { body: batch, ...idem(batchKey) });
      expectStatus(firstBatch, 200);
    } finally {
      await a.close();
    }
    const text = fs.readFileSync(file, 'utf8');
    for (const k of Object.values(a.keys)) expect(text, 'API keys saved only as digests').not.toContain(k);

    const b = await start(file, T0 + 60_000);
    try {
      const replay = await call(b, 'POST', '/contacts', { body, ...idem(key) });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(first.text);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.headers.get('x-request-id')).toBe(first.headers.get('x-request-id'));
      expect(await count(b, body.email)).toBe(1);
      const batchReplay = await call(b, 'POST', '/contacts/batch', { body: batch, ...idem(batchKey) });
      expect(batchReplay.text).toBe(firstBatch.text);
      expect(batchReplay.headers.get('idempotent-replayed')).toBe('true');
      for (const item of batch) expect(await count(b, item.email)).toBe(1);
      expectError(
        await call(b, 'POST', '/contacts', { body: createBody('contacts'), ...idem(key) }),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      );
      expect((await control(b, 'GET', '/stats')).body.idempotent_replays).toBe(2);
    } finally {
      await b.close();
    }
  });

  test('keys are kept for 24 h: replayed just before, dropped at load and on save after', async () => {
    const file = path.join(tempDir('crm-conf-idem-'), 'store.json');
    const [key, other] = [uniqueKey(), uniqueKey('other')];
    const body = createBody('contacts');
    const a = await start(file, T0);
    try {
      expectStatus(await call(a, 'POST', '/contacts', { body, ...idem(key) }), 201);
      expectStatus(await call(a, 'POST', '/contacts', { body: createBody('contacts'), ...idem(other) }), 201);
    } finally {
      await a.close();
    }
    const b = await start(file, T0 + DAY - 1);
    try {
      const replay = await call(b, 'POST', '/contacts', { body, ...idem(key) });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await b.close();
    }
    expect(
      saved(file)
        .idempotency?.map((e) => e.key)
        .sort(),
    ).toEqual([key, other].sort());

    const c = await start(file, T0 + DAY);
    try {
      const again = await call(c, 'POST', '/contacts', { body, ...idem(key) });
      expectStatus(again, 201);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      expect(await count(c, body.email)).toBe(2);
    } finally {
      await c.close();
    }
    expect(saved(file).idempotency).toEqual([expect.objectContaining({ key, stored_at: T0 + DAY })]);
  });

  test('a data file without idempotency keys (older format) loads; the next save adds them', async () => {
    const file = path.join(tempDir('crm-conf-idem-'), 'store.json');
    const old = {
      id: 'con_old_1',
      email: uniqueEmail('old'),
      first_name: 'Old',
      owner_id: 'usr_admin',
      created_at: new Date(T0).toISOString(),
      updated_at: new Date(T0).toISOString(),
    };
    fs.writeFileSync(
      file,
      JSON.stringify({ format: 'crm-sandbox-store/1', seq: 1, records: { contacts: [old] }, links: [] }),
    );
    const sb = await start(file, T0);
    const key = uniqueKey();
    try {
      expect((await call(sb, 'GET', '/contacts/con_old_1')).body.data).toEqual(old);
      expectStatus(await call(sb, 'POST', '/contacts', { body: createBody('contacts'), ...idem(key) }), 201);
    } finally {
      await sb.close();
    }
    expect(saved(file).idempotency?.map((e) => e.key)).toEqual([key]);
  });
});
