// Notices on a terminal's stderr (issue 17), in tmux at 80 columns: "Table fitted to 80 columns:
// hidden …" was one 179-column line the terminal cut mid-word. Read back with -J (rows the terminal
// wrapped joined again), every line crm wrote is at most 80 columns, and no word was split.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeContacts } from '../helpers/bulk.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { HAS_TMUX, sh, startTmux, type Tmux } from '../helpers/tmux.js';

const required = process.env.CRM_REQUIRE_SHELLS === '1';
let t: TestSandbox;
let tm: Tmux;
beforeAll(async () => {
  if (!HAS_TMUX) return;
  t = await startTestSandbox({ seed: 42 });
  tm = await startTmux();
});
afterAll(async () => {
  await tm?.close();
  await t?.close();
});

describe.skipIf(!HAS_TMUX && !required)('notices in tmux at 80 columns', () => {
  it.each([
    [
      'the table notice',
      'crm contacts list --limit 3 --fields id,email,first_name,last_name,title,phone,company_id,owner_id,created_at,updated_at',
      /^Table fitted to 80/,
    ],
    [
      'a usage error and its hint',
      'crm contacts list --limit 3 --param limit=5 --param cursor=x --no-such-flag-whose-name-goes-on-and-on-for-a-while-longer-than-eighty',
      /^Error: /,
    ],
  ])('%s: each line at most 80 columns, words whole', async (_name, command, first) => {
    const pane = await tm.run(command, { env: t.env('admin', { NO_COLOR: '1' }) });
    await pane.waitExit();
    const lines = await pane.capture({ history: true, joinWrapped: true });
    const at = lines.findIndex((l) => first.test(l));
    expect(at, lines.join('\n')).toBeGreaterThanOrEqual(0);
    const notice = lines.slice(at);
    expect(notice.length, notice.join('\n')).toBeGreaterThan(1);
    // wider only when it cannot break: one word, or a crm command to paste (it must stay one line)
    for (const line of notice)
      if (/\s/.test(line.trim()) && !/^crm /.test(line)) expect(stringWidth(line), line).toBeLessThanOrEqual(80);
    // each line break is at a space: a line ends with a whole word (no trailing hyphen split) and the next starts with one
    for (const line of notice) expect(line).not.toMatch(/^\s+\S/);
  });

  it('-o json with stdout into a file: the error and its hint wrapped at spaces, its JSON line whole after them', async () => {
    const long = join(
      tempDir('crm-notice-'),
      'a-folder-whose-name-is-rather-long',
      'people-exported-from-the-old-crm.csv',
    );
    const pane = await tm.run(`crm -o json batch contacts ${sh(long)} > /dev/null`, {
      env: t.env('admin', { NO_COLOR: '1' }),
    });
    expect((await pane.waitExit()).status).toBe(2);
    const lines = await pane.capture({ history: true, joinWrapped: true });
    const at = lines.findIndex((l) => l.startsWith('Error: '));
    const json = lines.findIndex((l) => l.startsWith('{"error"'));
    expect(at, lines.join('\n')).toBeGreaterThanOrEqual(0);
    expect(json, lines.join('\n')).toBeGreaterThan(at + 1); // the text took more than one line
    // the trial: with -o json the text went unwrapped, and the terminal cut the path's line mid-word
    for (const line of lines.slice(at, json))
      if (/\s/.test(line.trim())) expect(stringWidth(line), line).toBeLessThanOrEqual(80);
    expect(JSON.parse(lines[json]!)).toMatchObject({ error: { code: 'USAGE_ERROR' }, exit_code: 2 });
  });

  it('stdout on the terminal, stderr to a file: the notice is one line in the file, not wrapped at 80', async () => {
    const log = join(tempDir('crm-notice-'), 'e1.log');
    const command =
      'crm contacts list --limit 3 --fields id,email,first_name,last_name,title,phone,company_id,owner_id,created_at,updated_at';
    const pane = await tm.run(`${command} 2> ${sh(log)}`, { env: t.env('admin', { NO_COLOR: '1' }) });
    expect((await pane.waitExit()).status).toBe(0);
    const lines = readFileSync(log, 'utf8').split('\n');
    const notice = lines.find((l) => l.startsWith('Table fitted to 80'));
    expect(notice, lines.join('\n')).toMatch(/or -o json\.$/);
    expect(stringWidth(notice!)).toBeGreaterThan(80);
  });
  it('a delete, its restore and a --match plan: the notice, summary, restore note and plan line wrapped at spaces (issue 19)', async () => {
    const cwd = join(
      tempDir('crm-delete-wrap-'),
      'a-folder-with-a-rather-long-name-for-the-ids-of-the-contacts-to-delete',
    );
    mkdirSync(cwd, { recursive: true });
    const res = await fetch(`${t.sb.baseUrl}/contacts?limit=3`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
    const ids = ((await res.json()) as { data: Array<{ id: string }> }).data.map((r) => r.id);
    const file = join(cwd, 'ids-of-the-contacts-to-delete-today.txt');
    writeFileSync(file, `${ids.join('\n')}\n`);
    const matchFile = join(cwd, 'people-to-match-against-the-crm-by-email.csv');
    writeFileSync(matchFile, 'email,first_name\nwrap.test.one@example.com,One\nwrap.test.two@example.com,Two\n');
    const manyFile = join(cwd, 'one-hundred-and-twenty-contacts-to-delete.txt');
    writeFileSync(manyFile, `${(await makeContacts(t, 'wrap-many', 120)).join('\n')}\n`);
    const env = t.env('admin', { NO_COLOR: '1' });
    for (const [command, said] of [
      [`crm batch contacts ${sh(file)} --delete --yes`, /Deleting 3 contacts\.[^]*Deleted 3 of 3 contacts;/],
      [
        `crm batch contacts ${sh(`${file}.deleted.ndjson`)}`,
        /Created 3 of 3 contacts[^]*have new ids[^]*belong to the key's user/,
      ],
      [`crm batch contacts ${sh(matchFile)} --match email`, /under a\s+second/],
      // a delete of many: the listing's notice (new-user trial, issue 27: cut mid-word by the terminal)
      [
        `crm batch contacts ${sh(manyFile)} --delete --yes`,
        /Listed \d+ pages? of contacts: 120 found, each written to/,
      ],
    ] as const) {
      const pane = await tm.run(`clear; ${command}`, { env, cwd });
      await pane.waitExit(30_000);
      const lines = (await pane.capture({ history: true, joinWrapped: true })).filter(
        (l) => l.trim() !== '' && !/^[┌│└├]/.test(l),
      );
      const text = lines.join('\n');
      expect(text.replace(/\s+/g, ' '), command).toMatch(said);
      // wider only when it cannot break: one word (a path), or a crm command to paste
      for (const line of lines)
        if (/\s/.test(line.trim()) && !/^\s*\(?`?crm /.test(line) && !line.includes('$ '))
          expect(stringWidth(line), `${command}\n${text}`).toBeLessThanOrEqual(80);
    }
  }, 90_000);
});

// New-user trial in tmux at 80 columns: more text crm wrote wider than the terminal, cut by it in the
// middle of a word (`(3,021 rows of c` / `ontacts).`, `unde` / `r a second`, `leave i` / `t`).
/** lines wider than 80 that could have been broken at a space (the terminal cut them instead) */
const tooWide = (lines: string[]): string[] =>
  lines.filter((l) => /\S\s+\S/.test(l.trim()) && !/^\s*\(?`?crm /.test(l) && stringWidth(l) > 80);

/** 1,000 new people, one line pasted twice (repeated), one without an email (invalid): a long closing sentence */
function matchFile(dir: string): string {
  const file = join(dir, 'people.csv');
  const rows = Array.from({ length: 1000 }, (_, i) => `wrap80.person${i}@example.com,P${i}`);
  writeFileSync(file, ['email,first_name', ...rows, rows[0], ',NoEmail', ''].join('\n'));
  return file;
}

describe.skipIf(!HAS_TMUX && !required)('crm text in tmux at 80 columns, broken at spaces (new-user trial)', () => {
  it('--match: the dry-run plan on stdout (a terminal) is wrapped at spaces, and into a pipe it is as it was', async () => {
    const dir = tempDir('crm-wrap80-');
    const file = matchFile(dir);
    const env = t.env('admin', { NO_COLOR: '1' });
    const dry = await tm.run(`crm batch contacts ${sh(file)} --match email --dry-run`, { env, cwd: dir });
    await dry.waitExit(60_000);
    const plan = await dry.capture({ history: true, joinWrapped: true });
    expect(plan.join(' ').replace(/\s+/g, ' '), plan.join('\n')).toMatch(
      /Plan for 1,002 rows of contacts; read: .* in \d+ requests?, under a second/,
    );
    expect(tooWide(plan), plan.join('\n')).toEqual([]);

    // not a terminal: the same text, no line break put in (a script may read it)
    const piped = await tm.run(`crm batch contacts ${sh(file)} --match email --dry-run -o table | cat`, {
      env,
      cwd: dir,
    });
    await piped.waitExit(60_000);
    const whole = await piped.capture({ history: true, joinWrapped: true });
    expect(
      whole.find((l) => l.startsWith('Plan for 1,002 rows of contacts; read: ')),
      whole.join('\n'),
    ).toMatch(/under a second$/);
  }, 120_000);

  it('--match: the closing sentence of the run is wrapped at spaces', async () => {
    const dir = tempDir('crm-wrap80-');
    const file = matchFile(dir);
    const env = t.env('admin', { NO_COLOR: '1' });
    // --yes: a plan of 1,000 creates asks first on a terminal (confirmPlan)
    const run = await tm.run(`crm batch contacts ${sh(file)} --match email --yes`, { env, cwd: dir });
    await run.waitExit(60_000);
    const lines = (await run.capture({ history: true, joinWrapped: true })).filter((l) => !/^[┌│└├]/.test(l));
    expect(lines.join(' ').replace(/\s+/g, ' '), lines.join('\n')).toMatch(
      /Created 1,000, updated 0, 0 unchanged, 1 invalid, 1 skipped as repeating an earlier row \(1,002 rows of contacts\)\./,
    );
    expect(tooWide(lines), lines.join('\n')).toEqual([]);
  }, 120_000);
});

describe.skipIf(!HAS_TMUX && !required)('-v: the waiting notices at 80 columns (new-user trial)', () => {
  let slow: TestSandbox;
  beforeAll(async () => {
    if (HAS_TMUX) slow = await startTestSandbox({ seed: 42, rateLimit: 2, rateWindowMs: 2_000 });
  });
  afterAll(async () => slow?.close());

  it('each waiting notice is broken at spaces when stderr is a terminal', async () => {
    const pane = await tm.run('crm contacts list --all --limit 10 -v -o json > /dev/null', {
      env: slow.env('admin', { NO_COLOR: '1' }),
    });
    const { status } = await pane.waitExit(60_000);
    const lines = await pane.capture({ history: true, joinWrapped: true });
    expect(status, lines.join('\n')).toBe(0);
    expect(lines.join('\n')).toMatch(/^waiting \d+(\.\d+)? s: /m);
    // a request line stays whole (its URL one piece); the notices are wrapped
    expect(tooWide(lines.filter((l) => !/^GET /.test(l))), lines.join('\n')).toEqual([]);
  }, 90_000);
});
