// End to end: tables on a real pseudo-terminal 80 columns wide (util-linux `script`, `stty cols 80`),
// as a person meets them: ids whole, CJK and emoji measured in columns, hidden columns named on
// stderr, --wide, links list showing the role, keys list showing URL and key, get wrapping.
import { spawn, spawnSync } from 'node:child_process';
import stringWidth from 'string-width';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CRM_BIN, cleanEnv, collect } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

let t: TestSandbox;
const made: Record<string, string> = {};

async function post(path: string, body: unknown): Promise<string> {
  const res = await fetch(`${t.sb.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'X-Service-Api-Key': t.sb.keys.admin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return ((await res.json()) as { data: { id: string } }).data.id;
}

beforeAll(async () => {
  t = await startTestSandbox({ seed: 42 });
  made.cjk = await post('/contacts', {
    email: '山田.太郎@例え.jp',
    first_name: '山田',
    last_name: '太郎🚀',
    title: '営業部長・東京本社 国際事業開発担当',
  });
  made.emoji = await post('/contacts', {
    email: 'zoe.🎉@example.com',
    first_name: 'Zoë',
    last_name: '🎉👩‍💻🎉',
    title: 'Head of 🎉',
  });
  made.deal = await post('/deals', { name: '東京 deal 🚀', amount: 1000, stage: 'proposal' });
  made.note = await post('/notes', {
    body: `Notes: https://example.com/${'x'.repeat(120)} 東京の会議メモ😀 多言語のテキストが長く続きます。`,
  });
});
afterAll(async () => t?.close());

/** crm on an 80-column pseudo-terminal: stdout and stderr both land on it (CRLF line ends). */
async function at80(args: string[], cols = 80): Promise<{ code: number | null; lines: string[]; text: string }> {
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${cols} rows 50; exec ${[process.execPath, CRM_BIN, ...args].map(quote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: cleanEnv(t.env('admin')),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  const r = await collect(child);
  const text = r.stdout.replace(/\r\n/g, '\n');
  return { code: r.code, lines: text.trimEnd().split('\n'), text };
}

const tableLines = (lines: string[]) => lines.filter((l) => /^[┌│└]/.test(l));

describe.skipIf(!HAS_SCRIPT)('tables on an 80-column terminal', () => {
  it('contacts list: no line wider than 80 columns with CJK and emoji, every id whole, hidden columns named', async () => {
    const r = await at80(['contacts', 'list', '--all']);
    expect(r.code, r.text).toBe(0);
    const rows = tableLines(r.lines);
    expect(rows.length).toBeGreaterThan(5);
    for (const line of rows) expect(stringWidth(line), line).toBeLessThanOrEqual(80);
    expect(r.text).toContain(made.cjk);
    expect(r.text).toContain(made.emoji);
    expect(r.text).toContain('山田');
    for (const line of rows.slice(2, -1)) expect(line).toMatch(/^│ con_[a-z0-9]+ +│/);
    // the notice is wrapped at spaces to the terminal's 80 columns: read with its lines joined
    expect(r.text.replace(/\r?\n/g, ' ')).toMatch(
      /Table fitted to 80 columns: hidden company_id.*--wide, --fields id,company_id or -o json\./,
    );
  });

  it('--wide: every column uncut, wider than the terminal, no notice', async () => {
    const r = await at80(['--wide', 'contacts', 'list', '--all']);
    expect(r.code, r.text).toBe(0);
    expect(r.text).toContain('company_id');
    expect(r.text).toContain('ada.lovelace0@example.com');
    expect(r.text).not.toContain('…');
    expect(r.text).not.toContain('Table fitted');
  });

  it('links list deals D contacts: the role just set is shown, with the linked id whole', async () => {
    const add = await at80([
      'links',
      'add',
      'deals',
      made.deal!,
      'contacts',
      made.cjk!,
      '--type',
      'decision_maker',
      '--supervisor',
      made.emoji!,
    ]);
    expect(add.code, add.text).toBe(0);
    const r = await at80(['links', 'list', 'deals', made.deal!, 'contacts']);
    expect(r.code, r.text).toBe(0);
    const rows = tableLines(r.lines);
    expect(rows[1]).toMatch(/│ id +│ link\.type +│ link\.supervisor +│/);
    expect(rows[2]).toContain(made.cjk);
    expect(rows[2]).toContain('DECISION_MAKER');
    expect(rows[2]).toContain(made.emoji);
    for (const line of rows) expect(stringWidth(line)).toBeLessThanOrEqual(80);
  });

  it('keys list: profile, base URL and masked key whole', async () => {
    const add = spawnSync(process.execPath, [CRM_BIN, 'keys', 'add', 'work', '--base-url', t.sb.baseUrl], {
      env: cleanEnv(t.env('admin', { CRM_API_KEY: undefined, CRM_BASE_URL: undefined })),
      input: `${t.sb.keys.admin}\n`,
    });
    expect(add.status, String(add.stderr)).toBe(0);
    const r = await at80(['keys', 'list']);
    expect(r.code, r.text).toBe(0);
    expect(r.text).toContain(t.sb.baseUrl);
    expect(r.text).toMatch(new RegExp(`service_live_…${t.sb.keys.admin.slice(-4)}`));
    for (const line of tableLines(r.lines)) expect(stringWidth(line)).toBeLessThanOrEqual(80);
  });

  it('get: a long value wraps, is never cut, and the broken value is named with how to see it whole', async () => {
    const r = await at80(['notes', 'get', made.note!]);
    expect(r.code, r.text).toBe(0);
    const rows = tableLines(r.lines);
    for (const line of rows) expect(stringWidth(line)).toBeLessThanOrEqual(80);
    expect(r.text).not.toContain('…');
    expect(rows.join('').replace(/[│\s]/g, '')).toContain(`https://example.com/${'x'.repeat(120)}`);
    expect(r.text.replace(/\r?\n/g, ' ')).toContain(
      'Long values broken across lines to fit 80 columns: body. To see them whole: --wide or -o json.',
    );
  });
});
