// `crm batch` against a server that writes and then answers 500: every instruction crm prints,
// followed literally, must lead to each row being created exactly once (issue 9, class 1); another
// API key must not re-import a file; server text in the rejects file is made safe (class 4).
//
// The /contacts/batch route here keeps its own store keyed by Idempotency-Key (a repeated key gets
// the cached answer, `Idempotent-Replayed: true`, nothing written again) and counts how many times
// each email was created, so the tests count duplicates and losses across runs.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collect, runCrm, startCrm, type CrmResult } from '../helpers/run-crm.js';
import { errorEnvelope, json, meta, startHostile, type Hostile } from './server.js';
import { tempDir } from '../helpers/temp.js';

interface Store {
  /** Idempotency-Key → the answer given when it was first written */
  cache: Map<string, unknown>;
  /** email → how many times it was created */
  created: Map<string, number>;
  /** while true, a request holding a row whose email matches is written, then answered 500 */
  failing: RegExp | undefined;
  /** emails answered with an item error carrying hostile text */
  hostileItem: RegExp | undefined;
  batchRequests: number;
  /** the batch request of this number is written, then held unanswered until `released` (crm is killed meanwhile) */
  hold?: { at: number; reached: () => void; released: Promise<void> };
}

const EVIL_CODE = '=HYPERLINK("http://evil.example/x","click")';
const EVIL_MESSAGE = 'bad \u001b]8;;http://evil.example\u0007link\u001b]8;;\u0007 \u009b31m red \u202eevil\u202c end';

let h: Hostile;
let store: Store;
let nextId = 0;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => {
  h.reset();
  store = { cache: new Map(), created: new Map(), failing: undefined, hostileItem: undefined, batchRequests: 0 };
  h.route('POST', '/contacts/batch', async (req, res) => {
    const n = ++store.batchRequests;
    const key = String(req.headers['idempotency-key'] ?? '');
    const records = JSON.parse(req.body) as Array<Record<string, unknown>>;
    const fails = store.failing !== undefined && records.some((r) => store.failing!.test(String(r.email)));
    const cached = store.cache.get(key);
    if (cached) {
      if (fails) return json(res, 500, errorEnvelope('INTERNAL_ERROR', 'written, but the answer was lost'));
      return json(res, 200, cached, { 'idempotent-replayed': 'true' });
    }
    const items = records.map((r, index) => {
      const email = String(r.email);
      if (store.hostileItem?.test(email))
        return { index, status: 'error', error: { code: EVIL_CODE, message: EVIL_MESSAGE } };
      store.created.set(email, (store.created.get(email) ?? 0) + 1);
      return { index, status: 'created', data: { id: `con_${++nextId}`, ...r } };
    });
    const ok = items.filter((i) => i.status === 'created').length;
    const answer = {
      object: 'batch',
      data: { items, summary: { total: items.length, succeeded: ok, failed: items.length - ok } },
      meta: meta(),
    };
    store.cache.set(key, answer);
    if (store.hold?.at === n) {
      store.hold.reached();
      await store.hold.released;
      return void res.destroy();
    }
    if (fails) return json(res, 500, errorEnvelope('INTERNAL_ERROR', 'written, but the answer was lost'));
    return json(res, 200, answer);
  });
});

function workDir(): string {
  return tempDir('crm-exactly-once-');
}

/** `n` contacts `tag.i@example.com`; the rows in `invalid` carry a score that is not a number. */
function writeCsv(dir: string, tag: string, n: number, invalid: number[] = []): { file: string; emails: string[] } {
  const lines = ['First Name,Email,Score:number'];
  const emails: string[] = [];
  for (let i = 1; i <= n; i++) {
    emails.push(`${tag}.${i}@example.com`);
    lines.push(`Person ${i},${tag}.${i}@example.com,${invalid.includes(i) ? 'not-a-number' : i}`);
  }
  writeFileSync(join(dir, `${tag}.csv`), `${lines.join('\r\n')}\r\n`);
  return { file: `${tag}.csv`, emails };
}

const crm = (dir: string, args: string[], env: Record<string, string> = {}): Promise<CrmResult> =>
  runCrm(['--max-retries', '1', ...args], { env: h.env(env), cwd: dir, timeoutMs: 60_000 });

function expectExactlyOnce(emails: string[]): void {
  const dupes = [...store.created].filter(([, n]) => n > 1);
  expect(dupes, 'rows created more than once').toEqual([]);
  expect(
    emails.filter((e) => !store.created.has(e)),
    'rows never created',
  ).toEqual([]);
}

/** The `crm batch …` command crm's output tells the user to run for the rejects file. */
function printedCommand(stderr: string): string[] {
  const m = /run `crm (batch [^`]+)`/.exec(stderr);
  expect(m, `no command in: ${stderr}`).not.toBeNull();
  return m![1]!.split(' ');
}

describe('every instruction crm prints leads to each row exactly once', () => {
  it('500 after the write + an invalid row: crm says to rerun first (only that), then hands out the rejects file; following it literally', async () => {
    const dir = workDir();
    const { file, emails } = writeCsv(dir, 'lost', 30, [5]);
    store.failing = /^lost\.15@/; // the second chunk (rows 12–21 with chunks of 10) is written, then 500
    const first = await crm(dir, ['-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10', '--concurrency', '1']);
    expect(first.code, first.stderr).toBe(9);
    expect(JSON.parse(first.stdout)).toMatchObject({
      rows: 30,
      created: 19,
      failed: 10,
      invalid: 1,
      in_doubt: 10,
      rejects_file: 'lost.csv.rejects.csv',
    });
    store.failing = undefined; // the server has recovered by the time the user acts

    // rows in doubt: named as such, and the only instruction is the rerun (the rejects file comes after it)
    expect(first.stderr).toMatch(/Error: 10 rows sent without an answer \(rerun to settle\), 1 invalid, of 30/);
    expect(first.stderr).toMatch(
      /10 rows were sent without an answer and may have been created: first rerun this same command/,
    );
    expect(first.stderr).not.toMatch(/run `crm batch/);

    const rerun = await crm(dir, ['-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10', '--concurrency', '1']);
    expect(rerun.code, rerun.stderr).toBe(9); // the original file still has its invalid row
    expect(JSON.parse(rerun.stdout)).toMatchObject({ created: 0, skipped: 29, in_doubt: 0, invalid: 1 });
    expect(rerun.stderr).not.toMatch(/rerun to settle/);
    expectExactlyOnce(emails.filter((e) => e !== 'lost.5@example.com'));

    // now the rejects file: fix the row in the file crm names, run the command it prints
    const command = printedCommand(rerun.stderr);
    const rejectsFile = command[command.length - 1]!;
    expect(command).toEqual(['batch', 'contacts', 'lost.csv.rejects.csv']);
    const rejects = parse<Record<string, string>>(readFileSync(join(dir, rejectsFile), 'utf8'), { columns: true });
    expect(rejects.map((r) => r.Email)).toEqual(['lost.5@example.com']);
    writeFileSync(join(dir, rejectsFile), readFileSync(join(dir, rejectsFile), 'utf8').replace('not-a-number', '5'));
    const fed = await crm(dir, ['-o', 'json', ...command]);
    expect(fed.code, fed.stderr).toBe(0);
    expect(JSON.parse(fed.stdout)).toMatchObject({ created: 1, failed: 0 });
    expectExactlyOnce(emails);
    expect([...store.created.values()].reduce((a, b) => a + b, 0)).toBe(30);

    // that file edited and imported again is refused; the hint names no rejects file of it (it had none)
    writeFileSync(
      join(dir, rejectsFile),
      readFileSync(join(dir, rejectsFile), 'utf8').replace('Person 5', 'Person Five'),
    );
    const changed = await crm(dir, ['batch', 'contacts', rejectsFile]);
    expect(changed.code, changed.stderr).toBe(2);
    expect(changed.stderr).toMatch(/has changed since it was imported/);
    expect(changed.stderr).not.toMatch(/rejects\.csv\.rejects\.csv/);
    expect(changed.stderr).toMatch(/left no rows to fix/);
    expectExactlyOnce(emails);
  });

  it('a plain rerun first, then the rejects file: still each row once', async () => {
    const dir = workDir();
    const { file, emails } = writeCsv(dir, 'order', 25, [20]);
    store.failing = /^order\.3@/;
    const first = await crm(dir, ['batch', 'contacts', file, '--chunk-size', '10']);
    expect(first.code, first.stderr).toBe(9);
    store.failing = undefined;
    const rerun = await crm(dir, ['-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10']);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ created: 0, skipped: 24, invalid: 1, in_doubt: 0 });
    const command = printedCommand(rerun.stderr);
    const rejectsFile = join(dir, command[command.length - 1]!);
    writeFileSync(rejectsFile, readFileSync(rejectsFile, 'utf8').replace('not-a-number', '20'));
    expect((await crm(dir, command)).code).toBe(0);
    expectExactlyOnce(emails);
  });
});

describe('rows the server rejected (issue 17)', () => {
  it('a rerun after the cause is fixed sends the rejected rows again (new keys) and skips the rest; each row once', async () => {
    const dir = workDir();
    const { file, emails } = writeCsv(dir, 'refused', 25);
    store.hostileItem = /^refused\.(3|14)@/;
    const first = await crm(dir, ['-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10']);
    expect(first.code, first.stderr).toBe(9);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: 23, failed: 2 });
    store.hostileItem = undefined; // the cause is fixed on the server
    const before = store.batchRequests;
    const rerun = await crm(dir, ['-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stderr).toMatch(/left 2 rows not created: those rows are sent again/);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ created: 2, skipped: 23, failed: 0 });
    // the two rows of two chunks go in one request (issue 29)
    expect(store.batchRequests - before).toBe(1);
    expectExactlyOnce(emails);
    const third = await crm(dir, ['-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10']);
    expect(JSON.parse(third.stdout)).toMatchObject({ created: 0, skipped: 25, requests: 0 });
    expectExactlyOnce(emails);
  });

  it('a rerun killed (kill -9) while a request of rows sent again is in flight, written: the same command creates each row once', async () => {
    const dir = workDir();
    const { file, emails } = writeCsv(dir, 'gather', 400);
    const args = ['batch', 'contacts', file, '--chunk-size', '20', '--concurrency', '2'];
    store.hostileItem = /^gather\.\d*[15]@/; // 80 rows, 4 in each chunk of 20: sent again 5 chunks a request
    expect((await crm(dir, args)).code).toBe(9);
    store.hostileItem = /^gather\.\d*1@/; // partly fixed: the rerun's requests leave rows rejected again
    let reached = (): void => undefined;
    let release = (): void => undefined;
    const held = new Promise<void>((r) => (reached = r));
    store.hold = { at: store.batchRequests + 3, reached, released: new Promise<void>((r) => (release = r)) };
    const child = startCrm(['--max-retries', '1', ...args], { env: h.env(), cwd: dir });
    const killed = collect(child, { timeoutMs: 60_000 });
    await held;
    child.kill('SIGKILL');
    expect((await killed).signal).toBe('SIGKILL');
    release();
    store.hold = undefined;
    const resumed = await crm(dir, ['-o', 'json', ...args]);
    expect(resumed.code, resumed.stderr).toBe(9);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ failed: 40, created: expect.any(Number) as number });
    expect(
      [...store.created].filter(([, n]) => n > 1),
      'rows created more than once',
    ).toEqual([]);
    store.hostileItem = undefined;
    const fixed = await crm(dir, ['-o', 'json', ...args]);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({ created: 40, skipped: 360, failed: 0, requests: 2 });
    expectExactlyOnce(emails);
  });

  it('once their rejects file was imported, a rerun of the original does not send them again', async () => {
    const dir = workDir();
    const { file, emails } = writeCsv(dir, 'taken', 12);
    store.hostileItem = /^taken\.5@/;
    const first = await crm(dir, ['batch', 'contacts', file, '--chunk-size', '10']);
    expect(first.code, first.stderr).toBe(9);
    store.hostileItem = undefined;
    const command = printedCommand(first.stderr);
    expect((await crm(dir, command)).code).toBe(0);
    expectExactlyOnce(emails);
    const before = store.batchRequests;
    const rerun = await crm(dir, ['-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10']);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ created: 0, skipped: 11, failed: 1 });
    expect(store.batchRequests).toBe(before);
    expectExactlyOnce(emails);
  });
});

describe('a rotated API key', () => {
  it('an import failed part-way with key A, rerun with key B: refused (exit 2, nothing sent) with the way out; --no-resume proceeds', async () => {
    const dir = workDir();
    const { file, emails } = writeCsv(dir, 'rotate', 30);
    store.failing = /^rotate\.25@/;
    const first = await crm(dir, ['batch', 'contacts', file, '--chunk-size', '10']);
    expect(first.code, first.stderr).toBe(9);
    const before = store.batchRequests;
    const keyB = 'service_live_r0tat3dK3yZyXwVuTsRqPoNmLkJiHgFeDc1234';
    store.failing = undefined;
    const rotated = await crm(dir, ['batch', 'contacts', file, '--chunk-size', '10'], { CRM_API_KEY: keyB });
    expect(rotated.code, rotated.stderr).toBe(2);
    expect(rotated.stderr).toMatch(/was partly imported .* with another API key/);
    expect(rotated.stderr).toMatch(/every row created then would be created again/);
    expect(rotated.stderr).toMatch(/--no-resume/);
    expect(rotated.stderr).not.toContain(keyB.slice(8));
    expect(store.batchRequests).toBe(before);
    const knowingly = await crm(dir, ['-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10', '--no-resume'], {
      CRM_API_KEY: keyB,
    });
    expect(knowingly.code, knowingly.stderr).toBe(0);
    expect(store.batchRequests).toBeGreaterThan(before);
    // --no-resume is a new run with keys of its own (issue 17): every row is created again, as the refusal said
    expect(emails.map((e) => store.created.get(e))).toEqual(emails.map(() => 2));
  });
});

describe('the rejects file is safe to open', () => {
  it("the server's code and message are guarded against formulas and control characters; the original columns stay exact", async () => {
    const dir = workDir();
    const nameCell = '"=1+1, @SUM(A1) \u001b[31m"';
    const text = `First Name,Email\r\n${nameCell},evil.1@example.com\r\nOk,evil.2@example.com\r\n`;
    writeFileSync(join(dir, 'evil.csv'), text);
    store.hostileItem = /^evil\.1@/;
    const r = await crm(dir, ['batch', 'contacts', 'evil.csv']);
    expect(r.code, r.stderr).toBe(9);
    const raw = readFileSync(join(dir, 'evil.csv.rejects.csv'), 'utf8');
    // no raw control from the server: BEL, C1 CSI and bidi nowhere, ESC only in the user's own cell
    expect(raw).not.toMatch(/[\u0007\u009b\u202e\u202c]/);
    expect(raw.split('\u001b')).toHaveLength(2);
    const [row] = parse<Record<string, string>>(raw, { columns: true });
    expect(row!._error_code).toBe(`'${EVIL_CODE}`);
    expect(row!._error_message).toBe(
      'bad \\x1b]8;;http://evil.example\\x07link\\x1b]8;;\\x07 \\x9b31m red \\u202eevil\\u202c end',
    );
    // the user's own cell, as written (its ESC included): the file is fed back
    expect(row!['First Name']).toBe('=1+1, @SUM(A1) \u001b[31m');
    expect(raw).toContain(`${nameCell},evil.1@example.com,2,`);
    store.hostileItem = undefined;
    const fed = await crm(dir, ['batch', 'contacts', 'evil.csv.rejects.csv']);
    expect(fed.code, fed.stderr).toBe(0);
    const sent = JSON.parse(h.log[h.log.length - 1]!.body) as Array<Record<string, unknown>>;
    expect(sent).toEqual([{ first_name: '=1+1, @SUM(A1) \u001b[31m', email: 'evil.1@example.com' }]);
  });
});
