// Why rows failed, after `crm batch`, on an 80-column terminal (tmux, read back as a person sees it),
// when the server's reason is long (new-user trial: the reason was cut off, so the user could not
// read why rows failed): crm wraps it to the terminal's width and shows all of it; JSON is unchanged.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import { HAS_TMUX, sh, startTmux, type Tmux } from '../helpers/tmux.js';
import { json, meta, startHostile, type Hostile } from './server.js';

// .ci/run installs tmux and sets CRM_REQUIRE_SHELLS; elsewhere a missing tmux skips the file
const required = process.env.CRM_REQUIRE_SHELLS === '1';

const LONG =
  'email: the address is on the suppression list because an earlier message to it bounced permanently; ' +
  'remove it from the suppression list in Settings > Deliverability before importing it again, or ask ' +
  'your administrator (reference SUP-7731)';
const OTHER =
  'phone: the number has no country code, and the default country of this organisation is not set (set it under Settings > Organisation)';
/** a URL wider than an 80-column line: it must reach the terminal in one piece, to be copied */
const URL_REASON =
  'email: suppressed; see https://crm.example.com/help/articles/import-validation/the-address-is-on-the-suppression-list-and-cannot-be-imported for why';

let h: Hostile;
let tm: Tmux | undefined;
let dir: string;
let file: string;
beforeAll(async () => {
  h = await startHostile();
  h.route('POST', '/contacts/batch', (req, res) => {
    const records = JSON.parse(req.body) as Array<Record<string, unknown>>;
    const items = records.map((r, index) => {
      const email = String(r.email);
      if (email.startsWith('bounced'))
        return { index, status: 'error', error: { code: 'VALIDATION_FAILED', message: LONG } };
      if (email.startsWith('url'))
        return { index, status: 'error', error: { code: 'VALIDATION_FAILED', message: URL_REASON } };
      if (email.startsWith('other-'))
        return { index, status: 'error', error: { code: 'REJECTED', message: `rule ${email.split('@')[0]}` } };
      if (email.startsWith('phone'))
        return { index, status: 'error', error: { code: 'INVALID_PHONE_NUMBER', message: OTHER } };
      return { index, status: 'created', data: { id: `con_${index}`, ...r } };
    });
    const ok = items.filter((i) => i.status === 'created').length;
    json(res, 200, {
      object: 'batch',
      data: { items, summary: { total: items.length, succeeded: ok, failed: items.length - ok } },
      meta: meta(),
    });
  });
  if (HAS_TMUX) tm = await startTmux();
  dir = tempDir('crm-reasons-');
  file = join(dir, 'people.csv');
  writeFileSync(
    file,
    'email,first_name\nok1@example.com,A\nbounced1@example.com,B\nbounced2@example.com,C\nphone1@example.com,D\n',
  );
});
afterAll(async () => {
  await tm?.close();
  await h?.close();
});

/** The lines from `Why rows failed:` to the sentence after them. */
const whySection = (lines: string[]) => {
  const from = lines.findIndex((l) => l === 'Why rows failed:');
  const to = lines.findIndex((l, i) => i > from && l.startsWith('Created '));
  return lines.slice(from + 1, to);
};
const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

describe.skipIf(!HAS_TMUX && !required)('crm batch at 80 columns: why rows failed, in full', () => {
  it('a URL longer than the line is never split, and the 4th reason is said to be in the rejects file (new-user trial)', async () => {
    const more = join(dir, 'four-reasons.csv');
    const rows = ['url1', 'url2', 'other-a', 'other-b', 'other-c', 'ok9'].map((e) => `${e}@example.com,X`);
    writeFileSync(more, ['email,first_name', ...rows, ''].join('\n'));
    const pane = await tm!.run(`crm batch contacts ${sh(more)}`, {
      env: h.env({ NO_COLOR: '1' }),
      cwd: dir,
      height: 50,
    });
    expect((await pane.waitExit()).status).toBe(9);
    const joined = await pane.capture({ history: true, joinWrapped: true });
    const section = whySection(joined);
    const url = URL_REASON.split(' ').find((w) => w.startsWith('https://'))!;
    expect(
      section.map((l) => l.trim()),
      joined.join('\n'),
    ).toContain(url);
    expect(squash(section.join(' ')), joined.join('\n')).toContain(
      `and 1 row for other reasons (every row with its reason: ${more}.rejects.csv)`,
    );
    for (const line of section)
      if (!line.includes(url) && /\S\s+\S/.test(line.trim())) expect(line.length, line).toBeLessThanOrEqual(80);
    const rejects = parse<Record<string, string>>(readFileSync(`${more}.rejects.csv`, 'utf8'), { columns: true });
    expect(rejects.map((r) => r._error_message)).toContain('rule other-c');
  });

  it('a long reason is wrapped to 80 columns, under its code, and every word of it shows; none cut off', async () => {
    const pane = await tm!.run(`crm batch contacts ${sh(file)}`, {
      env: h.env({ NO_COLOR: '1' }),
      cwd: dir,
      height: 50,
    });
    const { status } = await pane.waitExit();
    expect(status).toBe(9);
    // -J joins back what the terminal wrapped: every line crm wrote fits in 80 columns by itself
    const joined = await pane.capture({ history: true, joinWrapped: true });
    const section = whySection(joined);
    expect(section.length, joined.join('\n')).toBeGreaterThan(2);
    for (const line of section) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(section.join('\n')).not.toContain('…');
    expect(section[0]).toMatch(/^ {2}2 × VALIDATION_FAILED {2}email: the address/);
    // continuation lines hang under the message
    const indent = section[0]!.indexOf('email:');
    expect(section[1]!.slice(0, indent).trim()).toBe('');
    const text = squash(section.join(' '));
    expect(text).toContain(squash(LONG));
    expect(text).toContain(squash(OTHER));
    // the server saw the rows; the rejects file has each message whole
    expect(h.log.filter((q) => q.path.endsWith('/contacts/batch')).length).toBeGreaterThan(0);
    const rejects = parse<Record<string, string>>(readFileSync(`${file}.rejects.csv`, 'utf8'), { columns: true });
    expect(rejects.map((r) => r._error_message)).toEqual([LONG, LONG, OTHER]);
  });
});

describe('crm batch, not on a terminal: the reason whole, JSON unchanged', () => {
  it('standard error into a pipe: each reason on one line, whole', async () => {
    const r = await runCrm(['-o', 'table', 'batch', 'contacts', file], { env: h.env(), cwd: dir });
    expect(r.code).toBe(9);
    expect(r.stderr).toContain(`  2 × VALIDATION_FAILED  ${LONG}\n`);
    expect(r.stderr).toContain(`  1 × INVALID_PHONE_NUMBER  ${OTHER}\n`);
  });

  it('-o json: the reasons in the summary, as the server sent them', async () => {
    const r = await runCrm(['-o', 'json', 'batch', 'contacts', file], { env: h.env(), cwd: dir });
    expect(r.code).toBe(9);
    expect(JSON.parse(r.stdout).reasons).toEqual([
      { code: 'VALIDATION_FAILED', message: LONG, count: 2 },
      { code: 'INVALID_PHONE_NUMBER', message: OTHER, count: 1 },
    ]);
    expect(r.stderr).not.toContain('Why rows failed');
  });
});
