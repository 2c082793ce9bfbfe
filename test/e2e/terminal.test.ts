// End to end in tmux, an 80-column terminal read back as a person sees it: progress of an import
// and of a download rewritten in place and leaving one summary, the hidden key prompt, the delete
// confirmation, a table with wide characters, and colours (on on a terminal, off with NO_COLOR and
// when piped).
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { HAS_TMUX, sh, startTmux, type Pane, type Tmux } from '../helpers/tmux.js';

// .ci/run installs tmux and sets CRM_REQUIRE_SHELLS; elsewhere a missing tmux skips the file
const required = process.env.CRM_REQUIRE_SHELLS === '1';
const SGR = /\x1b\[[\d;:]*m/;
const SGR_ALL = new RegExp(SGR.source, 'g');
const SPINNER = /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/;

let t: TestSandbox;
let tm: Tmux;
let work: string;

async function post(path: string, body: unknown): Promise<string> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { id: string } }).data.id;
}

async function status(path: string): Promise<number> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
  await res.arrayBuffer();
  return res.status;
}

/** every request answered after `ms` (the sandbox's fault settings), so progress stays on screen */
const latency = (ms: number) => t.control('/faults', { latency_ms: ms });

beforeAll(async () => {
  if (!HAS_TMUX) return;
  t = await startTestSandbox({ seed: 7, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  tm = await startTmux();
  work = mkdtempSync(join(tmpdir(), 'crm-terminal-'));
});
afterAll(async () => {
  await tm?.close();
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe.skipIf(!HAS_TMUX && !required)('crm in tmux at 80 columns', () => {
  it('tmux is installed', () => expect(HAS_TMUX, 'tmux is not installed (apt-get install tmux)').toBe(true));

  it('batch: the progress line is rewritten in place, on one row, uncoloured with NO_COLOR; one summary is left', async () => {
    const file = join(work, 'people.csv');
    const rows = Array.from({ length: 200 }, (_, i) => `person${i}@tmux.example,Person,${i}`);
    writeFileSync(file, `email,first_name,last_name\n${rows.join('\n')}\n`);
    await latency(60); // 20 requests one at a time: about 1.5 s of progress
    try {
      const pane = await tm.run(`crm batch contacts ${sh(file)} --chunk-size 10 --concurrency 1`, {
        env: t.env('admin', { NO_COLOR: '1' }),
      });
      const seen = await watchProgress(pane, / rows · /, false);
      expect(seen.size, [...seen].join('\n')).toBeGreaterThanOrEqual(2);
      const { status: code, lines } = await pane.waitExit();
      const text = lines.join('\n');
      expect(code, text).toBe(0);
      expect(text).not.toMatch(/ rows · |checking:|…/);
      expect(text).not.toMatch(SPINNER);
      expect(lines[0], text).toMatch(/^┌/); // nothing above the summary: no progress line left behind
      expect(lines.filter((l) => /^┌/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => /│ resource +│ contacts/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => /│ created +│ 200 /.test(l))).toHaveLength(1);
      // the summary ends with one sentence of what happened (issue 17)
      expect(lines.at(-2)).toMatch(/^└/);
      expect(lines.at(-1)).toBe('Created 200 of 200 contacts.');
    } finally {
      await latency(0);
    }
  });

  it('restore: a progress line while it reads the target and the links (the trial saw 45 s of nothing), none left', async () => {
    const dir = join(work, 'restore-snapshot');
    const snap = await runCrm(['snapshot', dir, '--links'], { env: t.env('admin') });
    expect(snap.code, snap.stderr).toBe(0);
    await latency(40); // the same organization: every record found, every parent's links read once
    try {
      const pane = await tm.run(`crm restore ${sh(dir)} --links`, { env: t.env('admin', { NO_COLOR: '1' }) });
      const seen = await watchProgress(pane, /reading the target's|links [a-z]+\.[a-z]+: /, false);
      expect(seen.size, [...seen].join('\n')).toBeGreaterThanOrEqual(2);
      const { status: code, lines } = await pane.waitExit();
      const text = lines.join('\n');
      expect(code, text).toBe(0);
      expect(text).not.toMatch(/reading the target's|links [a-z]+\.[a-z]+: /);
      expect(text).not.toMatch(SPINNER);
      expect(text).toMatch(/^Restored: 0 records created by this run/m);
    } finally {
      await latency(0);
    }
  });

  it('recordings download: the progress line is rewritten in place (spinner coloured on a terminal); one summary is left', async () => {
    const dir = join(work, 'transcripts');
    await latency(40); // a listing, then a link and a download per transcript, one at a time
    try {
      const pane = await tm.run(`crm recordings download --dir ${sh(dir)} --concurrency 1`, { env: t.env('admin') });
      const seen = await watchProgress(pane, /Downloading transcripts \d+\/\d+/, true);
      expect(seen.size, [...seen].join('\n')).toBeGreaterThanOrEqual(2);
      const { status: code, lines } = await pane.waitExit();
      const text = lines.join('\n');
      expect(code, text).toBe(0);
      const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
      expect(files.length).toBeGreaterThan(5);
      expect(text).not.toMatch(/Downloading|Listing/);
      expect(text).not.toMatch(SPINNER);
      expect(lines[0], text).toMatch(/^┌/);
      expect(lines.filter((l) => /^┌/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => new RegExp(`│ downloaded +│ ${files.length} `).test(l))).toHaveLength(1);
      expect(lines.at(-1)).toMatch(/^└/);
    } finally {
      await latency(0);
    }
  });

  it('keys add on a terminal: the key typed at the prompt never shows, and the profile works afterwards', async () => {
    const configDir = mkdtempSync(join(work, 'config-'));
    const key = t.sb.keys.admin;
    const pane = await tm.run(`crm keys add p --base-url ${sh(t.sb.baseUrl)}`, { env: { CRM_CONFIG_DIR: configDir } });
    await pane.waitFor(/API key for "p" \(service_live_…\):$/);
    await pane.type(key);
    // the answer to typing: nothing new on the screen (polled: an echo would come within this time)
    const typed = Date.now();
    await pane.waitFor(() => Date.now() - typed > 150);
    const screen = (await pane.capture({ history: true })).join('\n');
    expect(screen).toMatch(/API key for "p" \(service_live_…\):$/); // and nothing after it
    expect(screen).not.toContain(key.slice(0, 16));
    expect(screen).not.toContain('*');
    await pane.type('', { enter: true });
    const { status: code, lines } = await pane.waitExit();
    const text = lines.join('\n');
    expect(code, text).toBe(0);
    expect(text).toMatch(/Saved the key \S+ in profile "p"/);
    const secret = key.slice('service_live_'.length); // the mask shows its last four characters
    for (let i = 0; i + 6 <= secret.length; i++) expect(text).not.toContain(secret.slice(i, i + 6));
    const r = await runCrm(['--profile', 'p', 'contacts', 'list', '--limit', '1', '-o', 'json'], {
      env: { CRM_CONFIG_DIR: configDir },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(1);
  });

  it('contacts delete on a terminal asks, naming the backup: a wrong answer keeps the record, y keeps a copy then deletes it', async () => {
    const id = await post('/contacts', { email: 'delete.me@tmux.example', first_name: 'Delete', last_name: 'Me' });
    const cwd = mkdtempSync(join(tmpdir(), 'crm-tty-delete-'));
    const ask = async (answer: string) => {
      const pane = await tm.run(`crm contacts delete ${id}`, { env: t.env('admin'), cwd });
      const screen = await pane.waitFor(new RegExp(`Delete contact ${id}\\? \\[y/N\\]$`));
      expect(screen.join(' ').replace(/\s+/g, ' ')).toMatch(
        /Each record is first kept, as it is now, in contacts\.deleted\.\d{8}T\d{6}Z\.ndjson\./,
      );
      // the links are named before the question (issue 19), wrapped at 80 columns
      expect(screen.join(' ').replace(/\s+/g, ' ')).toContain(
        'Links to and from them are not kept and do not come back when they are created again: the deals that linked them (deals/{id}/contacts)',
      );
      await pane.type(answer, { enter: true });
      return pane.waitExit();
    };
    const no = await ask('yep');
    expect(no.status, no.lines.join('\n')).toBe(2);
    expect(no.lines.join('\n')).toMatch(/not deleted: not confirmed/);
    expect(await status(`/contacts/${id}`)).toBe(200);

    const yes = await ask('y');
    expect(yes.status, yes.lines.join('\n')).toBe(0);
    expect(yes.lines.join('\n')).toContain(`Deleted contact ${id}.`);
    expect(await status(`/contacts/${id}`)).toBe(404);
    const kept = readdirSync(cwd).filter((f) => /^contacts\.deleted\.\d{8}T\d{6}Z\.ndjson$/.test(f));
    expect(kept).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(cwd, kept[0]!), 'utf8'))).toMatchObject({
      id,
      email: 'delete.me@tmux.example',
    });
    rmSync(cwd, { recursive: true, force: true });
  });

  it('a table with CJK and emoji: no line wider than 80 columns, no row wrapped, ids whole', async () => {
    const ids = [
      await post('/contacts', {
        email: '山田.太郎@例え.jp',
        first_name: '山田',
        last_name: '太郎🚀',
        title: '営業部長・東京本社 国際事業開発担当',
      }),
      await post('/contacts', {
        email: 'zoe.🎉@example.com',
        first_name: 'Zoë',
        last_name: '🎉😀🎉',
        title: 'Head of 🎉 パーティー',
      }),
    ];
    const pane = await tm.run('crm contacts list --all', { env: t.env('admin', { NO_COLOR: '1' }) });
    const { status: code, lines: rows } = await pane.waitExit();
    const text = rows.join('\n');
    expect(code, text).toBe(0);
    // what tmux shows in 80 columns is what string-width measures (a wide character at the edge would differ)
    for (const row of rows) expect(stringWidth(row), row).toBeLessThanOrEqual(80);
    // -J joins the rows the terminal wrapped: every table line is still one row of at most 80
    const table = (await pane.capture({ history: true, joinWrapped: true })).filter((l) => /^[┌│├└]/.test(l));
    expect(table.length).toBeGreaterThan(5);
    expect(table.length).toBe(rows.filter((l) => /^[┌│├└]/.test(l)).length);
    for (const line of table) expect(stringWidth(line), line).toBeLessThanOrEqual(80);
    for (const line of table.filter((l) => /^│ con_/.test(l))) expect(line).toMatch(/^│ con_[a-z0-9]+ +│/);
    for (const id of ids)
      expect(
        table.some((l) => l.startsWith(`│ ${id} `)),
        id,
      ).toBe(true);
    expect(text).toContain('山田');
    expect(text).toContain('🎉');
  });

  describe('colours', () => {
    const list = 'crm contacts list --limit 3';

    it('batch with stdout on the terminal and stderr to a file: the summary in the file has no escape sequence', async () => {
      const file = join(work, 'colour.csv');
      writeFileSync(file, 'email,first_name\ncolour1@tmux.example,A\ncolour2@tmux.example,B\n');
      const log = join(work, 'e1.log');
      const pane = await tm.run(`crm batch contacts ${sh(file)} 2> ${sh(log)}`, { env: t.env('admin') });
      const { status: code, lines } = await pane.waitExit();
      expect(code, lines.join('\n')).toBe(0);
      const text = readFileSync(log, 'utf8');
      expect(text).toMatch(/│ created +│ 2 /);
      expect(JSON.stringify(text)).not.toContain('\\u001b');
    });

    it('on a terminal, the table is coloured (bold heading, grey borders)', async () => {
      const pane = await tm.run(list, { env: t.env('admin') });
      const { status: code } = await pane.waitExit();
      const lines = await pane.capture({ escapes: true, history: true });
      const text = JSON.stringify(lines.join('\n'));
      expect(code, text).toBe(0);
      expect(lines[0], text).toMatch(/^\x1b\[90m┌/); // grey (bright black)
      expect(lines[1], text).toMatch(/^[^│]*│\x1b\[1m(\x1b\[[\d;]*m)* id /); // bold
    });

    it.each([
      ['NO_COLOR=1', list, { NO_COLOR: '1' }],
      ['--no-color', `${list} --no-color`, {}],
      ['standard output piped', `${list} | cat`, {}],
    ])('%s: no escape sequence at all', async (_name, command, extra) => {
      const pane = await tm.run(command, { env: t.env('admin', extra) });
      const { status: code } = await pane.waitExit();
      const lines = await pane.capture({ escapes: true, history: true });
      const text = lines.join('\n');
      expect(code, text).toBe(0);
      expect(text).toMatch(/con_/);
      expect(text).not.toContain('\x1b');
    });
  });
});

/**
 * Reads the screen while the command runs until the progress line has changed a few times (or
 * the command is done). On every screen: exactly one progress line, on one row (nothing wrapped,
 * nothing scrolled off), spinner coloured only when colours are allowed.
 */
async function watchProgress(pane: Pane, progressLine: RegExp, colour: boolean): Promise<Set<string>> {
  const seen = new Set<string>();
  await pane.waitFor(
    (lines) => {
      const shown = lines.filter((l) => progressLine.test(l));
      if (shown.length > 0) {
        const screen = lines.join('\n');
        expect(shown, screen).toHaveLength(1);
        const row = shown[0]!;
        expect(stringWidth(row.replace(SGR_ALL, '')), screen).toBeLessThan(80);
        if (colour) expect(row, JSON.stringify(row)).toMatch(SGR);
        else expect(row, JSON.stringify(row)).not.toMatch(SGR);
        seen.add(row.replace(SGR_ALL, ''));
      }
      return seen.size >= 3 || lines.some((l) => /^└/.test(l));
    },
    // the whole history: a progress line scrolled off the top counts; -J: a wrapped one shows as one long line
    { history: true, joinWrapped: true, escapes: true },
  );
  return seen;
}
