// Exit codes follow the HTTP status even when the error body is slightly off the spec, and the
// server's message is shown as a message, not inside a raw quote. Bodies that are not errors at all
// (HTML, JSON with no message) stay exit 8.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { json, meta, startHostile, type Hostile } from './server.js';

const V1_KEY = 'service_pk_h0st1leV1KeyAbCdEfGhIjKlMnOp1234';
const BOUND = { timeoutMs: 15_000 };

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

const MESSAGE = 'the server explains itself';

/** Bodies that break the spec's error envelope in one way each; all carry MESSAGE. */
const SHAPES: Array<[name: string, body: unknown]> = [
  [
    'details an object',
    { object: 'error', error: { code: 'E', message: MESSAGE, details: { field: 'email' } }, meta: meta() },
  ],
  ['details null', { object: 'error', error: { code: 'E', message: MESSAGE, details: null }, meta: meta() }],
  [
    'details strings',
    { object: 'error', error: { code: 'E', message: MESSAGE, details: ['one', 'two'] }, meta: meta() },
  ],
  ['meta missing', { object: 'error', error: { code: 'E', message: MESSAGE, details: [] } }],
  ['error without code', { object: 'error', error: { message: MESSAGE, details: [] }, meta: meta() }],
  ['error a bare string', { error: MESSAGE }],
  ['a top-level message', { message: MESSAGE }],
];

const STATUSES: Array<[status: number, exit: number]> = [
  [401, 3],
  [403, 4],
  [404, 5],
  [422, 6],
  [429, 7],
];

const CASES = STATUSES.flatMap(([status, exit]) => SHAPES.map(([name, body]) => [status, exit, name, body] as const));

describe('v2: an off error body exits by its status and shows the message', () => {
  it.each(CASES)('HTTP %i → exit %i, %s', async (status, exit, _name, body) => {
    h.route('GET', /\/contacts\/[^/]+$/, (_req, res) => json(res, status, body, { 'retry-after': '0' }));
    const r = await runCrm(['--max-retries', '0', 'contacts', 'get', 'con_1'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(exit);
    expect(r.stderr).toContain(`Error: ${MESSAGE}`);
    expect(r.stderr).not.toMatch(/unexpected response/);
  });

  it('details given as strings are printed as lines', async () => {
    h.route('POST', '/contacts', (_req, res) => json(res, 422, SHAPES[2]![1]));
    const r = await runCrm(['contacts', 'create', '--set', 'email=a@b.c'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stderr).toMatch(/one\n[\s\S]*two/);
  });

  it('-o json: the error object carries the message, code and status', async () => {
    h.route('GET', /\/contacts\/[^/]+$/, (_req, res) => json(res, 403, SHAPES[0]![1]));
    const r = await runCrm(['-o', 'json', 'contacts', 'get', 'con_1'], { env: h.env(), ...BOUND });
    expect(r.code).toBe(4);
    const line = r.stderr.split('\n').find((l) => l.startsWith('{'))!;
    expect(JSON.parse(line)).toMatchObject({
      error: { code: 'E', message: MESSAGE, details: [{ field: 'email' }] },
      status: 403,
    });
  });

  it.each([
    ['HTML', '<html><body>404 Not Found</body></html>'],
    ['JSON with no message', '{"data":null}'],
  ])('a 404 whose body is %s is not an error body: exit 8, quoted', async (_name, text) => {
    h.route('GET', /\/contacts\/[^/]+$/, (_req, res) => json(res, 404, text));
    const r = await runCrm(['contacts', 'get', 'con_1'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/unexpected response from the server \(HTTP 404/);
  });
});

describe('v1: the same for version 1 error shapes', () => {
  it.each([
    [401, 3, { success: false, error: { message: MESSAGE } }],
    [403, 4, { success: false, message: MESSAGE }],
    [422, 6, { success: false, error: MESSAGE }],
  ] as const)('HTTP %i → exit %i', async (status, exit, body) => {
    h.route('POST', /\/api\/v1\/people\/query$/, (_req, res) => json(res, status, body));
    const r = await runCrm(['-q', 'v1', 'people', 'query'], { env: h.env({ CRM_V1_API_KEY: V1_KEY }), ...BOUND });
    expect(r.code, r.stderr).toBe(exit);
    expect(r.stderr).toContain(`Error: ${MESSAGE}`);
  });
});
