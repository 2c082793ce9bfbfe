// Class 4 of issue 9: server text never reaches a terminal raw (C0, C1 such as the 8-bit CSI U+009B,
// bidi overrides, line separators), on every path: `crm api`, tables, hints, errors; data to a pipe
// stays exact; and an error with 100 000 details prints a few lines, all of them in -o json.
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CRM_BIN, cleanEnv, collect, runCrm } from '../helpers/run-crm.js';
// what a terminal would act on: C0 (but LF, and CR which a pty adds), DEL, C1, bidi, line separators
import { RAW_UNSAFE_BUT_LINES as RAW_UNSAFE } from '../helpers/unsafe.js';
import { contact, errorEnvelope, json, listPage, startHostile, success, type Hostile } from './server.js';

const NASTY = 'a\u009b31mRED\u202eevil\u2028x\u061cy\u200ez\u001b]8;;http://x\u0007link\u0085';
const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => {
  h.reset();
  h.route('GET', /\/contacts\/con_1$/, (_req, res) => json(res, 200, success(contact(1, { notes: NASTY }))));
  h.route('GET', '/contacts', (_req, res) =>
    json(res, 200, listPage([contact(1, { notes: NASTY })], `cur\u001b[2J\u009b${NASTY}`, true)),
  );
  h.route('POST', '/people/query', (_req, res) =>
    json(res, 200, { success: true, data: { people: [{ id: 'p1', email: NASTY }] }, nextCursor: `n\u009b1m${NASTY}` }),
  );
});

/** Runs crm on a pseudo-terminal (util-linux `script`): stdout and stderr both go to it. */
async function onTerminal(args: string[]): Promise<string> {
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, CRM_BIN, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: cleanEnv({ ...h.env({ CRM_V1_API_KEY: 'service_pk_abcdefghijklmnop1234' }), COLUMNS: '200' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const r = await collect(child);
  return r.stdout + r.stderr;
}

describe('crm api', () => {
  it('piped: no raw control or bidi character, and the JSON is the data as sent', async () => {
    const r = await runCrm(['api', 'GET', '/contacts/con_1'], { env: h.env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(RAW_UNSAFE);
    expect((JSON.parse(r.stdout) as { data: { notes: string } }).data.notes).toBe(NASTY);
  });

  it.skipIf(!HAS_SCRIPT)('on a terminal: escaped', async () => {
    const out = await onTerminal(['api', 'GET', '/contacts/con_1']);
    expect(out).toContain('con_000001');
    expect(out).not.toMatch(RAW_UNSAFE);
  });
});

describe('every other path on a terminal', () => {
  it.skipIf(!HAS_SCRIPT)('get and list tables, and the next-page hint with a hostile cursor', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['contacts', 'get', 'con_1'], /con_000001/],
      [['contacts', 'list', '--fields', 'id,notes'], /More results/],
      [['v1', 'people', 'query'], /More results/],
    ];
    for (const [args, shows] of cases) {
      const out = await onTerminal(args);
      expect(out, args.join(' ')).toMatch(shows);
      expect(out, args.join(' ')).not.toMatch(RAW_UNSAFE);
    }
  });

  it('the next-page hint on stderr, v2 and v1 (-o table)', async () => {
    for (const args of [
      ['-o', 'table', 'contacts', 'list'],
      ['-o', 'table', 'v1', 'people', 'query'],
    ]) {
      const r = await runCrm(args, { env: h.env({ CRM_V1_API_KEY: 'service_pk_abcdefghijklmnop1234' }) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('More results');
      expect(r.stderr).toContain('\\x9b');
      expect(r.stderr + r.stdout).not.toMatch(RAW_UNSAFE);
    }
  });
});

describe('an error with 100 000 details', () => {
  beforeEach(() => {
    const details = Array.from({ length: 100_000 }, (_, i) => ({ field: `f${i}`, message: `bad\u009b ${i}` }));
    h.route('POST', '/contacts', (_req, res) =>
      json(res, 422, errorEnvelope('VALIDATION_FAILED', 'many problems', details)),
    );
  });

  it('prints the first few and how many more; -o json carries all of them', async () => {
    const r = await runCrm(['contacts', 'create', '--set', 'email=a@b.c'], { env: h.env() });
    expect(r.code, r.stderr.slice(0, 500)).toBe(6);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines.length).toBeLessThan(20);
    expect(r.stderr).toContain('f9: bad\\x9b 9');
    expect(r.stderr).not.toContain('f10:');
    expect(r.stderr).toMatch(/… and 99990 more \(see -o json\)/);

    const j = await runCrm(['-o', 'json', 'contacts', 'create', '--set', 'email=a@b.c'], { env: h.env() });
    expect(j.code).toBe(6);
    const jsonLines = j.stderr.trimEnd().split('\n');
    expect(jsonLines.length).toBeLessThan(20);
    const obj = JSON.parse(jsonLines.at(-1)!) as { error: { details: Array<{ field: string; message: string }> } };
    expect(obj.error.details).toHaveLength(100_000);
    expect(obj.error.details[99_999]).toEqual({ field: 'f99999', message: 'bad\u009b 99999' });
    expect(j.stderr).not.toMatch(RAW_UNSAFE);
  });
});
