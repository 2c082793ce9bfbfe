// The cost a `crm batch --match` plan says before it sends (issue 29: "at least 4 s" for a run of 63 s),
// held against a run on a terminal (tmux) at 10 requests per 2 s, started at several points of the
// key's window: at its start, and late in a window others opened, the read crossing into the next
// window or not. A front before the sandbox notes when each request came and what its answer said
// of the window, so the least time the limit allows from the plan on is known: what the plan says is
// never more than the time the run took after it, and never less than that least time (but for its
// rounding down). Until an answer has opened a window its length is not known: the plan then says
// the least time should the window be as short as the Resets seen, and at the spec's minute.
import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostile, type HostileRequest } from '../hostile/server.js';
import { answerBack, passOn } from '../helpers/held-answers.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { HAS_TMUX, sh, startTmux, type Tmux } from '../helpers/tmux.js';

const required = process.env.CRM_REQUIRE_SHELLS === '1';
const [LIMIT, WINDOW_MS] = [10, 2000];
const dir = tempDir('crm-plan-cost-');
let tm: Tmux;
beforeAll(async () => {
  if (HAS_TMUX) tm = await startTmux();
});
afterAll(async () => tm?.close());

/** A request as the front saw it: when it came and when its answer went back (the front's clock), what the answer said. */
interface Seen {
  method: string;
  path: string;
  at: number;
  answeredAt: number;
  remaining?: number;
  resetMs?: number;
}

/** A front passing every request on to the sandbox, a read after `readWayMs` (a slow way there), noting each as it came. */
async function recordingFront(t: TestSandbox, readWayMs: number) {
  const target = new URL(t.sb.baseUrl).origin;
  const seen: Seen[] = [];
  const h = await startHostile();
  h.route(undefined, /^\//, async (req: HostileRequest, res: ServerResponse) => {
    const at = performance.now();
    if (req.method === 'GET' && readWayMs > 0) await new Promise((r) => setTimeout(r, readWayMs));
    const answer = await passOn(target, req);
    const [remaining, reset] = ['x-ratelimit-remaining', 'x-ratelimit-reset'].map((n) => answer.headers.get(n));
    seen.push({
      ...{ method: req.method, path: req.path, at, answeredAt: performance.now() },
      ...(remaining !== null && reset !== null ? { remaining: Number(remaining), resetMs: Number(reset) * 1000 } : {}),
    });
    answerBack(res, answer);
  });
  return {
    seen,
    env: t.env('admin', { CRM_BASE_URL: h.baseUrl, CRM_V1_BASE_URL: h.v1BaseUrl }),
    close: () => h.close(),
  };
}

/** The least time `n` requests take from `p`, with `remaining` left in the window ending at `resetAt` (windows back to back after it). */
function leastFrom(p: number, n: number, remaining: number, resetAt: number): number {
  let [t, left, allowed, end] = [p, n, remaining, resetAt];
  if (t >= end) [allowed, end] = [LIMIT, t + WINDOW_MS]; // that window is over: the next request opens one
  for (;;) {
    left -= Math.min(left, allowed);
    if (left === 0) return t - p;
    [t, end, allowed] = [end, end + WINDOW_MS, LIMIT];
  }
}

/** A time as the plan says it (`at least 4.2 s`, `64 s`, `1.1 min`, `under a second`) and how much it may be rounded down by. */
function said(words: string): { ms: number; step: number } {
  if (words === 'under a second') return { ms: 0, step: 1000 };
  const m = /([\d.]+) (s|min)$/.exec(words)!;
  const x = Number(m[1]);
  return m[2] === 's' ? { ms: x * 1000, step: x < 10 ? 100 : 1000 } : { ms: x * 60_000, step: x < 10 ? 6000 : 60_000 };
}

/**
 * A sandbox of `records` contacts at 10 requests per 2 s (answers 100 ms late: a read's pages take a while),
 * `used` of the key's window taken just before crm starts (0: crm opens the window); a file updating 28
 * of them with --match email, run on a terminal. What the plan said, and the requests the front saw.
 */
async function run(records: number, used: number, readWayMs: number) {
  const t = await startTestSandbox({
    ...{ rateLimit: LIMIT, orgRateLimit: 1_000_000, rateWindowMs: WINDOW_MS, latencyMs: 100 },
    seedRecords: { contacts: records },
  });
  const front = await recordingFront(t, readWayMs);
  try {
    // emails held by one record each (as --match compares them: case and spaces aside), read with another key (its window is its own)
    const emails: string[] = [];
    for (let cursor = ''; ;) {
      const res = await fetch(`${t.sb.baseUrl}/contacts?limit=100${cursor}`, {
        headers: { 'X-Service-Api-Key': t.sb.keys.readonly },
      });
      const page = (await res.json()) as {
        data: Array<{ email: string }>;
        page_info: { end_cursor: string; has_next_page: boolean };
      };
      emails.push(...page.data.map((c) => c.email));
      if (!page.page_info.has_next_page) break;
      cursor = `&cursor=${page.page_info.end_cursor}`;
    }
    const keys = emails.map((e) => e.trim().toLowerCase());
    const once = emails.filter((_, i) => keys.indexOf(keys[i]!) === keys.lastIndexOf(keys[i]!)).slice(0, 28);
    expect(once.length).toBe(28);
    const file = join(dir, `cost-${records}-${used}-${readWayMs}.csv`);
    writeFileSync(file, `email,title\n${once.map((e, i) => `${e},Plan cost ${i}`).join('\n')}\n`);
    // someone else on the key opened its window and took `used` of it
    await Promise.all(
      Array.from({ length: used }, () =>
        fetch(`${t.sb.baseUrl}/contacts?limit=1`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } }),
      ),
    );
    const pane = await tm.run(`crm batch contacts ${sh(file)} --match email`, { env: front.env, cwd: dir, height: 50 });
    await pane.waitFor(/requests to send/, { timeoutMs: 20_000 });
    const planSeen = performance.now();
    const { status, lines } = await pane.waitExit(30_000);
    const screen = lines.join('\n').replace(/\s+/g, ' ');
    expect(status, screen).toBe(0);
    const plan =
      /requests to send: 28, (under a second|at least [\d.]+ (?:s|min)) at the key's rate limit(?:, ([\d.]+ (?:s|min)) if its window is the spec's minute \(no answer has shown its length yet\))?/.exec(
        screen,
      );
    expect(plan, screen).not.toBeNull();
    const reads = front.seen.filter((s) => s.method === 'GET');
    const sends = front.seen.filter((s) => s.method === 'PATCH');
    expect(sends.length).toBe(28);
    // the plan is made between the last read's answer and the first PATCH (or the plan on the screen)
    const last = reads.at(-1)!;
    const [a, b] = [last.answeredAt, Math.min(sends[0]!.at, planSeen)];
    const resetAt = last.answeredAt + last.resetMs!;
    // the least time from the plan on, whenever between a and b it was made (it falls as time goes, but
    // for the jump at the window's end)
    const least = Math.min(
      leastFrom(b, 28, last.remaining!, resetAt),
      ...(a < resetAt && resetAt <= b ? [leastFrom(resetAt - 1e-3, 28, last.remaining!, resetAt)] : []),
    );
    const took = Math.max(...sends.map((s) => s.at)) - a;
    return {
      least,
      took,
      said: said(plan![1]!),
      spec: plan![2] === undefined ? undefined : said(plan![2]),
      where: { remaining: last.remaining!, resetInMs: resetAt - a, read: reads.length },
      // an answer to crm's read opened a window (its request the window's first): its length is known
      opened: reads.some((r) => r.remaining === LIMIT - 1),
    };
  } finally {
    await front.close();
    await t.close();
  }
}

/** What holds wherever the run started: the plan never says more than the run took, nor less than the limit allows (but for its rounding down). */
function holds(r: Awaited<ReturnType<typeof run>>): void {
  const figures = JSON.stringify(r);
  expect(r.said.ms, figures).toBeLessThanOrEqual(r.took);
  // the window's length known, the least time; else the one at the spec's minute is no less. crm knows
  // the window as the longest time-to-reset it read, a little after the server wrote it (a busy
  // machine: a few ms a window), so the least time it says may fall short by that: 2% allowed
  const most = r.spec ?? r.said;
  expect(most.ms + most.step, figures).toBeGreaterThan(r.least * 0.98);
  expect(r.spec === undefined, figures).toBe(r.opened);
}

describe.skipIf(!HAS_TMUX && !required)("the plan's cost against the run, at 10 requests per 2 s (tmux)", () => {
  // crm takes a moment to start: "late" is most of the time, not always (a slow machine may start it in a window of its own)
  it.each([
    ['at the start of a window crm opens, its read one page', 50, 0, 0],
    ['at the start of a window crm opens, its read of 10 pages using it up', 1000, 0, 0],
    ['late in a window others used 3 of: the read crosses into the next, which tells its length', 1000, 3, 0],
    ['late in a window others used 3 of, the read in it: its length not known', 50, 3, 0],
    ['late in a window others used 8 of, the read in it: its length not known', 50, 8, 0],
    // a busy machine (0.5 s in CI) while crm reads, not while it sends: the opening answer's Reset less
    // its send time is longer than the window (a plan said "at least 6.0 s" for a run of 5.5)
    ['its read crossing into a window that tells its length, the way to the server 500 ms as it reads', 1000, 3, 500],
  ])('%s', async (_name, records, used, readWayMs) => holds(await run(records, used, readWayMs)), 30_000);
});
