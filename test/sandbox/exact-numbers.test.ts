// Issue 28: the sandbox keeps every JSON number as it was sent (src/json/exact-json.ts: a number no
// double holds is a RawNumber, written back as its digits), in bodies, the idempotency cache, the data
// file, a `--from` snapshot and every answer; a field named `__proto__` or `constructor` is a field.
// Checked on the response text: `call`'s parsed body is JSON.parse's, which rounds.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  call,
  expectError,
  expectStatus,
  queueFaults,
  startSandbox,
  tempDir,
  uniqueEmail,
  uniqueKey,
  useSandbox,
  withSandbox,
  ROOMY,
  type CallResult,
} from './helpers.js';

const ctx = useSandbox();

const BIG = '12345678901234567890123';
const DEC = '0.10000000000000000001';
/** numbers no double holds: a big integer, a long decimal, an overflow and an underflow, as sent */
const EXACT = `"amount":${BIG},"dec":${DEC},"huge":1e400,"tiny":-1.5E-400`;

let n = 0;
const dealBody = (fields = EXACT) => `{"name":"Exact deal ${process.pid}-${++n}",${fields}}`;

const post = (path: string, rawBody: string, headers: Record<string, string> = {}) =>
  call(ctx.sb, 'POST', path, { rawBody, headers });

/** The id of the record a 201 or 200 answered (JSON.parse is fine for a string). */
const idOf = (res: CallResult): string => res.body.data.id as string;

describe('a record keeps its numbers', () => {
  test('create, get, list (a filter on the digits) and update answer the digits as sent', async () => {
    const created = await post('/deals', dealBody());
    expectStatus(created, 201);
    expect(created.text).toContain(EXACT);
    const id = idOf(created);

    const got = await call(ctx.sb, 'GET', `/deals/${id}`);
    expectStatus(got, 200);
    expect(got.text).toContain(EXACT);

    const listed = await call(ctx.sb, 'GET', '/deals', { query: { amount: BIG } });
    expectStatus(listed, 200);
    expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual([id]);
    expect(listed.text).toContain(EXACT);
    // a digit beyond a double's precision is another value
    const other = await call(ctx.sb, 'GET', '/deals', { query: { amount: BIG.replace(/3$/, '4') } });
    expect(other.body.data).toEqual([]);

    const updated = await call(ctx.sb, 'PATCH', `/deals/${id}`, { rawBody: '{"amount":98765432109876543210987}' });
    expectStatus(updated, 200);
    expect(updated.text).toContain(`"amount":98765432109876543210987,"dec":${DEC}`);
    expect((await call(ctx.sb, 'GET', `/deals/${id}`)).text).toContain('"amount":98765432109876543210987,');
  });

  test('numbers nested in objects and arrays, and numbers a double holds, come back as sent', async () => {
    const fields = `"custom":{"ids":[${BIG},-${BIG},1.5,0,1e+21],"deep":{"x":${DEC}}},"plain":42`;
    const created = await post('/deals', dealBody(fields));
    expectStatus(created, 201);
    expect(created.text).toContain(fields);
    expect((await call(ctx.sb, 'GET', `/deals/${idOf(created)}`)).text).toContain(fields);
  });

  test('a batch create answers each item with its digits', async () => {
    const res = await post('/deals/batch', `[${dealBody()},${dealBody(`"amount":-${BIG}`)}]`);
    expectStatus(res, 200);
    expect(res.body.data.summary).toEqual({ total: 2, succeeded: 2, failed: 0 });
    expect(res.text).toContain(EXACT);
    expect(res.text).toContain(`"amount":-${BIG}`);
  });
});

describe('fields named __proto__ and constructor are ordinary fields', () => {
  test('stored, served back (create, get, list, update) and filtered on', async () => {
    const email = uniqueEmail('proto');
    const fields = `"__proto__":{"polluted":${BIG}},"constructor":${BIG},"toString":"x"`;
    const created = await post('/contacts', `{"email":"${email}",${fields}}`);
    expectStatus(created, 201);
    expect(created.text).toContain(fields);
    const id = idOf(created);
    expect((await call(ctx.sb, 'GET', `/contacts/${id}`)).text).toContain(fields);
    const listed = await call(ctx.sb, 'GET', '/contacts', { query: { constructor: BIG, email } });
    expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual([id]);
    const updated = await call(ctx.sb, 'PATCH', `/contacts/${id}`, { rawBody: '{"__proto__":[1,2]}' });
    expect(updated.text).toContain(`"__proto__":[1,2],"constructor":${BIG}`);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('idempotency compares the exact numbers', () => {
  test('a replay answers the same digits; a body apart in a digit beyond a double is another body', async () => {
    const key = uniqueKey('exact');
    const body = dealBody();
    const first = await post('/deals', body, { 'Idempotency-Key': key });
    expectStatus(first, 201);
    const replay = await post('/deals', body, { 'Idempotency-Key': key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    // the same values spelt otherwise: the same body
    const respelt = body.replace(`"amount":${BIG}`, `"amount" : ${BIG}.000`).replace('1e400', '10E+399');
    expect((await post('/deals', respelt, { 'Idempotency-Key': key })).text).toBe(first.text);
    // 12345678901234567890123 and 12345678901234567890124 are the same double: not the same body
    const differing = body.replace(`"amount":${BIG}`, `"amount":${BIG.replace(/3$/, '4')}`);
    expectError(await post('/deals', differing, { 'Idempotency-Key': key }), 422, 'IDEMPOTENCY_KEY_REUSED');
    const digitsAsString = body.replace(`"amount":${BIG}`, `"amount":"${BIG}"`);
    expectError(await post('/deals', digitsAsString, { 'Idempotency-Key': key }), 422, 'IDEMPOTENCY_KEY_REUSED');
  });
});

describe('malformed JSON around a long number', () => {
  test.each([
    ['a number where a key must be', `{"name":"x", ${BIG}: 1}`],
    ['a trailing comma', `{"name":"x","amount":${BIG},}`],
  ])('%s is 422 INVALID_BODY in JSON.parse’s words', async (_what, rawBody) => {
    const res = await post('/deals', rawBody);
    expectError(res, 422, 'INVALID_BODY');
    let words = '';
    try {
      JSON.parse(rawBody);
    } catch (err) {
      words = (err as Error).message;
    }
    expect(res.body.error.message).toBe(`The body is not valid JSON: ${words}`);
  });
});

describe('a long number is a number, never an object', () => {
  test('as a body, a batch item, a version 1 filter or control faults it is refused as a short one is', async () => {
    for (const body of [BIG, '12']) {
      const res = await post('/deals', body);
      expectError(res, 422, 'INVALID_BODY');
      expect(res.body.error.message, body).toBe('The body must be a JSON object');
      const batch = await post('/deals/batch', `[${body}]`);
      expect(batch.body.data.items[0].error.details, body).toEqual([{ field: '(item)', issue: 'must_be_object' }]);
      const v1 = await call(ctx.sb, 'POST', '/api/v1/people/query', {
        key: ctx.sb.keys.v1,
        rawBody: `{"filter":${body}}`,
      });
      expect(v1.body.error.details, body).toEqual([{ field: 'filter', issue: 'must_be_object' }]);
    }
    await withSandbox({}, async (sb) => {
      const faults = await call(sb, 'POST', `${sb.controlUrl}/faults`, { key: null, rawBody: `{"faults":${BIG}}` });
      expectError(faults, 422, 'VALIDATION_FAILED');
      expect(faults.body.error.message).toBe('faults must be an object of kind: probability');
    });
  });
});

describe('numbers where a rule asks for one', () => {
  const v1 = (method: string, path: string, rawBody: string) =>
    call(ctx.sb, method, `/api/v1${path}`, { key: ctx.sb.keys.v1, rawBody });

  test('version 1: foundedYear takes an integer of any size, not a fraction; answers carry the digits', async () => {
    const company = await post('/companies', `{"name":"Exact ${process.pid}"}`);
    const id = idOf(company);
    expectStatus(await v1('PATCH', `/companies/${id}`, `{"foundedYear":${BIG}}`), 200);
    expect((await call(ctx.sb, 'GET', `/companies/${id}`)).text).toContain(`"founded_year":${BIG}`);
    for (const fraction of ['1.0000000000000000001', '2000.000000000000000000001', '1e-400']) {
      const res = await v1('PATCH', `/companies/${id}`, `{"foundedYear":${fraction}}`);
      expect(res.status, fraction).toBe(422);
      expect(res.body.error.details).toEqual([{ field: 'foundedYear', issue: 'must_be_integer' }]);
    }
    expect((await call(ctx.sb, 'GET', `/companies/${id}`)).text).toContain(`"founded_year":${BIG}`);

    const email = uniqueEmail('v1exact');
    expectStatus(await post('/contacts', `{"email":"${email}","phone":${BIG}}`), 201);
    const people = await v1('POST', '/people/query', `{"filter":{"email":"${email}"}}`);
    expectStatus(people, 200);
    expect(people.text).toContain(`"phone":${BIG}`);
  });

  test('a limit must be an integer from 1 to 100: a long number is refused as 0 is', async () => {
    const zero = await v1('POST', '/people/query', '{"limit":0}');
    for (const limit of ['10.000000000000000000001', BIG]) {
      const res = await v1('POST', '/people/query', `{"limit":${limit}}`);
      expect(res.status, limit).toBe(422);
      expect(res.body.error).toEqual({ ...zero.body.error });
    }
  });

  test('control: whole-number settings refuse a long number; fail_rate takes any number from 0 to 1', async () => {
    await withSandbox({}, async (sb) => {
      const post = (path: string, rawBody: string) => call(sb, 'POST', sb.controlUrl + path, { key: null, rawBody });
      const slow = await post('/faults', '{"latency_ms":1.0000000000000000001}');
      expectError(slow, 422, 'VALIDATION_FAILED');
      expect(slow.body.error.message).toBe('latency_ms must be a non-negative integer');
      const limit = await post('/limits', `{"rate_limit":${BIG}}`);
      expectError(limit, 422, 'VALIDATION_FAILED');
      expect(limit.body.error.message).toBe('rate_limit must be a positive integer');
      const rate = await post('/faults', `{"fail_rate":${DEC},"faults":{"500":${DEC}}}`);
      expectStatus(rate, 200);
      expect(rate.body).toMatchObject({ fail_rate: 0.1, faults: { '500': 0.1 } });
      expectError(await post('/faults', '{"fail_rate":1e400}'), 422, 'VALIDATION_FAILED');
    });
  });
});

describe('files', () => {
  test('--data-file saves the digits and serves them after a restart (records and replays)', async () => {
    const file = path.join(tempDir('crm-exact-data-'), 'store.json');
    const key = { 'Idempotency-Key': uniqueKey('exact-file') };
    const body = dealBody();
    // seed 9: the same API keys on both starts (the cache is per key)
    const sb = await startSandbox({ ...ROOMY, seed: 9, dataFile: file });
    let first: CallResult;
    try {
      first = await call(sb, 'POST', '/deals', { rawBody: body, headers: key });
      expectStatus(first, 201);
    } finally {
      await sb.close();
    }
    const saved = fs.readFileSync(file, 'utf8');
    expect(saved).toContain(EXACT);
    expect(saved).not.toContain(`"${BIG}"`);
    await withSandbox({ seed: 9, dataFile: file }, async (again) => {
      expect((await call(again, 'GET', `/deals/${idOf(first)}`)).text).toContain(EXACT);
      const replay = await call(again, 'POST', '/deals', { rawBody: body, headers: key });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.text).toBe(first.text);
      const differing = body.replace(`"amount":${BIG}`, `"amount":${BIG.replace(/3$/, '4')}`);
      expectError(
        await call(again, 'POST', '/deals', { rawBody: differing, headers: key }),
        422,
        'IDEMPOTENCY_KEY_REUSED',
      );
    });
  });

  test('a data file written by hand is served with its digits', async () => {
    const file = path.join(tempDir('crm-exact-data-'), 'store.json');
    const record = `{"id":"deal_hand","name":"By hand",${EXACT},"__proto__":{"a":${DEC}}}`;
    fs.writeFileSync(file, `{"format":"crm-sandbox-store/1","seq":1,"records":{"deals":[${record}]},"links":[]}`);
    await withSandbox({ dataFile: file, seed: undefined }, async (sb) => {
      const got = await call(sb, 'GET', '/deals/deal_hand');
      expectStatus(got, 200);
      expect(got.text).toContain(record);
    });
  });

  test('a recording’s transcript says its duration as the recording does, also when a fault cuts it', async () => {
    const file = path.join(tempDir('crm-exact-data-'), 'store.json');
    const recording = `{"id":"rec_exact","title":"Call","has_transcript":true,"duration_seconds":${BIG}}`;
    fs.writeFileSync(
      file,
      `{"format":"crm-sandbox-store/1","seq":1,"records":{"recordings":[${recording}]},"links":[]}`,
    );
    await withSandbox({ dataFile: file, seed: undefined }, async (sb) => {
      const link = async () => (await call(sb, 'GET', '/recordings/rec_exact')).body.data.transcript_url as string;
      const transcript = await call(sb, 'GET', await link(), { key: null });
      expectStatus(transcript, 200);
      expect(transcript.text).toContain(`"duration_seconds":${BIG}`);
      await queueFaults(sb, [{ kind: 'truncated', path: '^/transcripts/download/' }]);
      const cut = await call(sb, 'GET', await link(), { key: null });
      expect(cut.body).toBeUndefined(); // half a body: not JSON
      expect(cut.text).toContain(`"duration_seconds":${BIG}`);
    });
  });

  test('--from serves the digits of the snapshot’s NDJSON lines', async () => {
    const dir = tempDir('crm-exact-from-');
    const record = `{"id":"deal_snap","name":"Snap",${EXACT},"constructor":${BIG},"owner_id":"usr_admin"}`;
    const collections = { deals: { file: 'deals.ndjson', records: 1, complete: true } };
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ complete: true, collections }));
    fs.writeFileSync(path.join(dir, 'deals.ndjson'), `${record}\n`);
    await withSandbox({ from: dir, seed: undefined }, async (sb) => {
      const got = await call(sb, 'GET', '/deals/deal_snap');
      expectStatus(got, 200);
      expect(got.text).toContain(record);
      expect((await call(sb, 'GET', '/deals', { query: { amount: BIG } })).text).toContain(record);
    });
  });
});
