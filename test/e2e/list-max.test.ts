// End to end: `list --max N` on one page. The "More results" hint must never hand out a cursor
// that skips records: with --max the page is asked for no more than N records, so its end cursor
// follows the last one printed; a page cut anyway (a filter, a server ignoring limit) gets no cursor.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { contact, json, listPage, startHostile, type Hostile } from '../hostile/server.js';

let t: TestSandbox;
let h: Hostile;
beforeAll(async () => {
  [t, h] = await Promise.all([startTestSandbox({ seed: 7 }), startHostile()]);
});
afterAll(async () => Promise.all([t?.close(), h?.close()]));
beforeEach(() => h.reset());

const crm = (args: string[]) => runCrm(args, { env: t.env('admin') });
const ids = (stdout: string): string[] => (JSON.parse(stdout) as Array<{ id: string }>).map((r) => r.id);

describe('list --max', () => {
  it('the cursor in the hint goes on from the last record shown: following it skips nothing', async () => {
    const all = await crm(['-o', 'json', 'contacts', 'list', '--all', '--max', '10']);
    expect(all.code, all.stderr).toBe(0);
    const expected = ids(all.stdout);
    expect(expected).toHaveLength(10);
    const first = await crm(['-o', 'table', 'contacts', 'list', '--max', '3']);
    expect(first.code, first.stderr).toBe(0);
    const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1];
    expect(cursor, first.stderr).toBeDefined();
    const next = await crm(['-o', 'json', 'contacts', 'list', '--cursor', cursor!, '--max', '3']);
    expect(next.code, next.stderr).toBe(0);
    expect(ids(next.stdout)).toEqual(expected.slice(3, 6));
  });

  it('--max 0 is refused (exit 2): it would print nothing but a cursor', async () => {
    const r = await crm(['-o', 'table', 'contacts', 'list', '--max', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--max.*from 1/);
  });

  it('a server that ignores limit: the page is cut at --max and no cursor is offered', async () => {
    h.route('GET', '/contacts', (_req, res) =>
      json(
        res,
        200,
        listPage(
          Array.from({ length: 25 }, (_, i) => contact(i + 1)),
          'CURSOR_AFTER_25',
          true,
        ),
      ),
    );
    const r = await runCrm(['-o', 'table', 'contacts', 'list', '--max', '3'], { env: h.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(h.log[0]!.query.get('limit')).toBe('3');
    expect(r.stderr).not.toMatch(/CURSOR_AFTER_25/);
    expect(r.stderr).toMatch(/More results: raise --max/);
  });

  it('a client-side filter (--has-transcript) that stops mid-page offers no cursor', async () => {
    const recs = Array.from({ length: 25 }, (_, i) => ({ id: `rec_${i}`, has_transcript: i % 2 === 0 }));
    h.route('GET', '/recordings', (_req, res) => json(res, 200, listPage(recs, 'CURSOR_AFTER_25', true)));
    const r = await runCrm(['-o', 'table', 'recordings', 'list', '--has-transcript', '--max', '3'], { env: h.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/CURSOR_AFTER_25/);
    expect(r.stderr).toMatch(/More results: raise --max/);
  });
});
