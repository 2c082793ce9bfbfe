import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type CrmHttpClient } from '../../../src/http/client.js';
import { InstantClock, sendJson, startServer, success, type TestServer } from './helpers.js';

const KEY = 'service_live_abcdefghijklmnopqrstuvwxf3a9';
let server: TestServer | undefined;
let client: CrmHttpClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
});

describe('client smoke', () => {
  it('GETs and returns the envelope', async () => {
    server = await startServer((_req, res) => sendJson(res, 200, success({ id: 'con_1' })));
    client = createClient({ baseUrl: server.baseUrl, apiKey: KEY, authHeader: 'x-api-key', clock: new InstantClock() });
    const res = await client.request<{ data: { id: string } }>({ method: 'GET', path: '/contacts/con_1' });
    expect(res.body.data.id).toBe('con_1');
    expect(server.requests[0]!.url).toBe('/api/v2/contacts/con_1');
    expect(server.requests[0]!.headers['x-service-api-key']).toBe(KEY);
  });
});
