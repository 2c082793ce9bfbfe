// A smoke test over real loopback HTTP: start on port 0, a few requests of each kind, close.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  batchEnvelope,
  errorEnvelope,
  listEnvelope,
  successEnvelope,
  v1SuccessEnvelope,
} from '../../../src/api/envelopes.js';
import { startSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';

let sb: RunningSandbox;
const json = (body: unknown) => JSON.stringify(body);

async function call(
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; headers?: Record<string, string>; v1?: boolean } = {},
) {
  const base = opts.v1 ? sb.v1BaseUrl : sb.baseUrl;
  const res = await fetch(base + path, {
    method,
    headers: {
      ...(opts.key === '' ? {} : { 'X-Service-Api-Key': opts.key ?? sb.keys.admin }),
      ...(opts.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...opts.headers,
    },
    body: opts.body === undefined ? undefined : json(opts.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 7 });
});
afterAll(async () => {
  await sb.close();
});

describe('sandbox smoke', () => {
  it('prints seeded keys of the right forms', async () => {
    expect(sb.keys.admin).toMatch(/^service_live_/);
    expect(sb.keys.v1).toMatch(/^service_pk_/);
    const again = await startSandbox({ port: 0, seed: 7, control: false });
    expect(again.keys).toEqual(sb.keys);
    expect(again.controlUrl).toBeUndefined();
    await again.close();
  });

  it('lists seeded contacts with pagination and rate-limit headers', async () => {
    const first = await call('GET', '/contacts?limit=30');
    expect(first.status).toBe(200);
    listEnvelope.parse(first.body);
    expect(first.body.data).toHaveLength(30);
    expect(first.body.page_info.has_next_page).toBe(true);
    expect(first.headers.get('x-ratelimit-limit')).toBe('200');
    expect(first.headers.get('x-request-id')).toBe(first.body.meta.request_id);
    const second = await call('GET', `/contacts?limit=30&cursor=${first.body.page_info.end_cursor}`);
    expect(second.body.data).toHaveLength(10);
    expect(second.body.page_info.has_next_page).toBe(false);
  });

  it('creates, gets, updates and deletes a contact', async () => {
    const created = await call('POST', '/contacts', { body: { email: 'a@b.c', first_name: 'A' } });
    expect(created.status).toBe(201);
    successEnvelope.parse(created.body);
    const id = created.body.data.id as string;
    expect(id).toMatch(/^con_/);
    expect(created.headers.get('location')).toBe(`${sb.baseUrl}/contacts/${id}`);
    const patched = await call('PATCH', `/contacts/${id}`, { body: { last_name: 'B' } });
    expect(patched.body.data).toMatchObject({ email: 'a@b.c', first_name: 'A', last_name: 'B' });
    const deleted = await call('DELETE', `/contacts/${id}`);
    expect(deleted.body.data).toEqual({ id, deleted: true });
    const gone = await call('GET', `/contacts/${id}`);
    expect(gone.status).toBe(404);
    errorEnvelope.parse(gone.body);
  });

  it('answers a batch with per-item errors and status 200', async () => {
    const res = await call('POST', '/companies/batch', { body: [{ name: 'X' }, { domain: 'no-name' }] });
    expect(res.status).toBe(200);
    batchEnvelope.parse(res.body);
    expect(res.body.data.summary).toEqual({ total: 2, succeeded: 1, failed: 1 });
    expect(res.body.data.items[1].error.code).toBe('VALIDATION_FAILED');
  });

  it('replays an idempotent create', async () => {
    const headers = { 'Idempotency-Key': 'smoke-1' };
    const a = await call('POST', '/tasks', { body: { title: 'T' }, headers });
    const b = await call('POST', '/tasks', { body: { title: 'T' }, headers });
    expect(b.text).toBe(a.text);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const c = await call('POST', '/tasks', { body: { title: 'U' }, headers });
    expect(c.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('serves a transcript through a fresh link', async () => {
    const list = await call('GET', '/recordings?has_transcript=true&limit=1');
    const rec = await call('GET', `/recordings/${list.body.data[0].id}`);
    const url = rec.body.data.transcript_url as string;
    expect(url).toContain('/transcripts/download/');
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { recording_id: string }).recording_id).toBe(list.body.data[0].id);
  });

  it('serves version 1 people with a top-level nextCursor', async () => {
    const res = await call('POST', '/people/query', { key: sb.keys.v1, v1: true, body: { limit: 2 } });
    expect(res.status).toBe(200);
    v1SuccessEnvelope.parse(res.body);
    expect(res.body.data.people).toHaveLength(2);
    expect(typeof res.body.nextCursor).toBe('string');
    const wrong = await call('GET', '/contacts', { key: sb.keys.v1 });
    expect(wrong.body.error.code).toBe('WRONG_API_VERSION');
  });

  it('injects a queued fault and logs it with the key hidden', async () => {
    const before = ((await (await fetch(`${sb.controlUrl}/stats`)).json()) as { requests: number }).requests;
    await fetch(`${sb.controlUrl}/faults`, {
      method: 'POST',
      body: json({ next: [{ kind: '500', path: '/deals$' }] }),
    });
    const failed = await call('GET', '/deals');
    expect(failed.status).toBe(500);
    expect(failed.body.error.code).toBe('INTERNAL_ERROR');
    expect((await call('GET', '/deals')).status).toBe(200);
    const log = (await (await fetch(`${sb.controlUrl}/requests?since=${before}`)).json()) as Array<Record<string, any>>;
    expect(log[0]).toMatchObject({ method: 'GET', path: '/api/v2/deals', status: 500, fault: '500' });
    expect(log[0]!.headers['x-service-api-key']).toBe('<present>');
  });
});
