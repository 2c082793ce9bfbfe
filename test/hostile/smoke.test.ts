// The hostile server itself: a well-formed answer goes through crm as from the real API.
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { HOSTILE_KEY, contact, json, listPage, startHostile, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile([
    { method: 'GET', path: '/contacts', handler: (_req, res) => json(res, 200, listPage([contact(1)], null, false)) },
  ]);
});
afterAll(async () => h?.close());

it('serves a spec-shaped list that crm prints', async () => {
  const r = await runCrm(['-o', 'ndjson', 'contacts', 'list'], { env: h.env() });
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout).id).toBe('con_000001');
  expect(h.log[0]!.headers['x-service-api-key']).toBe(HOSTILE_KEY);
});

it('survives a client that hangs up in the middle of a request body (no unhandled rejection)', async () => {
  const rejections: unknown[] = [];
  const note = (reason: unknown) => rejections.push(reason);
  process.on('unhandledRejection', note);
  try {
    const { port } = new URL(h.origin);
    const sock = connect(Number(port), '127.0.0.1');
    await once(sock, 'connect');
    sock.write('POST /api/v2/contacts HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"partial":');
    await new Promise((r) => setTimeout(r, 50)); // the server is now reading the body
    sock.destroy();
    await new Promise((r) => setTimeout(r, 100)); // lets the aborted read settle
    expect(rejections).toEqual([]);
    expect((await runCrm(['-o', 'ndjson', 'contacts', 'list'], { env: h.env() })).code).toBe(0);
  } finally {
    process.off('unhandledRejection', note);
  }
});
