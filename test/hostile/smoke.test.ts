// The hostile server itself: a well-formed answer goes through crm as from the real API.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { contact, json, listPage, startHostile, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile([{ method: 'GET', path: '/contacts', handler: (_req, res) => json(res, 200, listPage([contact(1)], null, false)) }]);
});
afterAll(async () => h?.close());

it('serves a spec-shaped list that crm prints', async () => {
  const r = await runCrm(['-o', 'ndjson', 'contacts', 'list'], { env: h.env() });
  expect(r.code, r.stderr).toBe(0);
  expect(JSON.parse(r.stdout).id).toBe('con_000001');
  expect(h.log[0]!.headers['x-service-api-key']).toBeDefined();
});
