// Pagination that never ends: cursors that cycle and pages that stay empty while the server says
// there is more. Every paging loop of crm (list --all, api --paginate, recordings download, v1
// --all) must stop with exit 8 naming the problem, after a bounded number of requests. Each run is
// bounded by runCrm's timeout, so a crm that loops makes the test fail instead of hanging.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { contact, json, listPage, startHostile, type Hostile } from './server.js';

const V1_KEY = 'service_pk_h0st1leV1KeyAbCdEfGhIjKlMnOp1234';
const BOUND = { timeoutMs: 15_000 };

let h: Hostile;
let dir: string;
beforeAll(async () => {
  h = await startHostile();
  dir = mkdtempSync(join(tmpdir(), 'crm-hostile-pages-'));
});
afterAll(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => h.reset());

/**
 * Every endless route gives up after this many requests (has_next_page false), so a crm without the
 * guard ends (exit 0, and the test fails) instead of spinning until runCrm's timeout; the timer alone
 * was starved by thousands of requests a second served in this process.
 */
const GIVE_UP = 300;

const requests = (path: string) => h.log.filter((r) => r.path.endsWith(path)).length;

/** Pages whose end_cursor goes round `cycle` for ever (has_next_page always true). */
function cyclingList(path: string, cycle: string[], record: (n: number) => Record<string, unknown> = contact): void {
  h.route('GET', path, (req, res, ctx) => {
    const at = req.query.get('cursor');
    const next = cycle[(at === null ? 0 : cycle.indexOf(at) + 1) % cycle.length]!;
    json(res, 200, listPage([record(ctx.count)], next, ctx.count < GIVE_UP));
  });
}

/** Empty pages with a fresh cursor each time, for ever; `every` > 0 puts one record on every n-th page. */
function emptyList(path: string, every = 0): void {
  h.route('GET', path, (_req, res, ctx) => {
    const data = every > 0 && ctx.count % every === every - 1 ? [contact(ctx.count)] : [];
    json(res, 200, listPage(data, `fresh_${ctx.count}`, ctx.count < GIVE_UP));
  });
}

describe('list --all', () => {
  it.each([
    [1, ['A']],
    [2, ['A', 'B']],
    [3, ['A', 'B', 'C']],
  ])('a cursor cycle of length %i stops with exit 8 naming the cycle', async (length, cycle) => {
    cyclingList('/contacts', cycle);
    const r = await runCrm(['-o', 'ndjson', 'contacts', 'list', '--all'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(new RegExp(`pagination loops: .*cycle of ${length} page`));
    // the cycle is seen as soon as it closes: one request per cursor, and one more
    expect(requests('/contacts')).toBe(length + 1);
    expect(r.stdout.trim().split('\n')).toHaveLength(length + 1); // what came is still printed
  });

  it('a cycle back to the --cursor it started from is a cycle too', async () => {
    cyclingList('/contacts', ['S', 'T']);
    const r = await runCrm(['-o', 'ndjson', 'contacts', 'list', '--all', '--cursor', 'T'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/points back to cursor "T" of the start/);
    expect(requests('/contacts')).toBe(2);
  });

  it('empty pages for ever stop after a bounded run (20) with exit 8', async () => {
    emptyList('/contacts');
    const r = await runCrm(['-o', 'json', 'contacts', 'list', '--all'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/20 empty pages in a row/);
    expect(requests('/contacts')).toBe(20);
  });

  it('--max with empty pages stops too', async () => {
    emptyList('/contacts');
    const r = await runCrm(['-o', 'json', 'contacts', 'list', '--all', '--max', '5'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(requests('/contacts')).toBeLessThanOrEqual(25);
  });

  it('--max bounds the requests, not only the records: mostly-empty pages stop at max + 20', async () => {
    emptyList('/contacts', 19); // one record every 19 pages: never 20 empty in a row
    const r = await runCrm(['-o', 'ndjson', 'contacts', 'list', '--all', '--max', '30'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/50 pages gave 2 records, too few for --max 30/);
    expect(requests('/contacts')).toBe(50);
  });

  it('a healthy server with a few empty pages still pages to the end', async () => {
    h.route('GET', '/contacts', (_req, res, ctx) => {
      json(
        res,
        200,
        listPage(
          ctx.count % 3 === 0 ? [contact(ctx.count)] : [],
          ctx.count < 30 ? `c${ctx.count}` : null,
          ctx.count < 30,
        ),
      );
    });
    const r = await runCrm(['-o', 'ndjson', 'contacts', 'list', '--all', '--max', '100'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(11);
  });
});

describe('the other paging loops share the guard', () => {
  it('api GET --paginate: a cycle is exit 8', async () => {
    cyclingList('/contacts', ['A', 'B']);
    const r = await runCrm(['api', 'GET', '/contacts', '--paginate'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/pagination loops: .*cycle of 2 pages/);
  });

  it('api GET --paginate: empty pages for ever are exit 8', async () => {
    emptyList('/contacts');
    const r = await runCrm(['api', 'GET', '/contacts', '--paginate'], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/empty pages in a row/);
  });

  it('recordings download: a cycle in the listing is exit 8', async () => {
    cyclingList('/recordings', ['A', 'B', 'C'], (n) => ({ id: `rec_${n}`, has_transcript: false }));
    const r = await runCrm(['recordings', 'download', '--dir', join(dir, 'cycle')], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/pagination loops: .*cycle of 3 pages/);
  });

  it('recordings download: empty pages for ever are exit 8', async () => {
    emptyList('/recordings');
    const r = await runCrm(['recordings', 'download', '--dir', join(dir, 'empty')], { env: h.env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/empty pages in a row/);
  });

  /** v1 people/query: `nextCursor` from `next(count, cursor)`, `records` people per page. */
  function v1People(next: (count: number, cursor: string | undefined) => string, records = 0): void {
    h.route('POST', /\/api\/v1\/people\/query$/, (req, res, ctx) => {
      const cursor = (JSON.parse(req.body || '{}') as { cursor?: string }).cursor;
      const people = Array.from({ length: records }, (_, i) => ({
        id: `p_${ctx.count}_${i}`,
        email: `p${ctx.count}@x.test`,
      }));
      json(res, 200, {
        success: true,
        data: { people },
        nextCursor: ctx.count < GIVE_UP ? next(ctx.count, cursor) : null,
      });
    });
  }
  const v1Env = () => h.env({ CRM_V1_API_KEY: V1_KEY });

  it('v1 --all: empty pages with fresh cursors for ever are exit 8', async () => {
    v1People((n) => `v1_${n}`);
    const r = await runCrm(['-q', '-o', 'ndjson', 'v1', 'people', 'query', '--all'], { env: v1Env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/20 empty pages in a row/);
    expect(requests('/people/query')).toBe(20);
  });

  it('v1 --all: a cycle of 3 is exit 8 naming the cycle', async () => {
    const cycle = ['A', 'B', 'C'];
    v1People((_n, cursor) => cycle[(cursor === undefined ? 0 : cycle.indexOf(cursor) + 1) % 3]!, 1);
    const r = await runCrm(['-q', '-o', 'ndjson', 'v1', 'people', 'query', '--all'], { env: v1Env(), ...BOUND });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/pagination loops: .*cycle of 3 pages/);
    expect(requests('/people/query')).toBe(4);
  });
});
