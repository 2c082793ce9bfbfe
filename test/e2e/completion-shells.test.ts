// TAB in the real bash, zsh and fish, with `crm completion SHELL` installed as the README says:
// verbs before flags, flag values (formats, roles, record types, profiles), files and folders
// where a file or folder is expected, and nothing where the value is free text.
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEAL_CONTACT_TYPES, RESOURCES } from '../../src/api/resources.js';
import {
  completeIn,
  installCompletions,
  shellAvailable,
  type Shell,
  type ShellHome,
} from '../helpers/shell-complete.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FORMATS = ['csv', 'json', 'ndjson', 'table', 'tsv'];
const KEY = 'service_live_SECRETdoNotPrint1234567890';
const sorted = (words: readonly string[]) => [...words].sort();

/** line typed before TAB → exactly what must be offered */
const CASES: Array<[string, string[]]> = [
  ['crm contacts ', ['create', 'delete', 'get', 'list', 'update']],
  ['crm co', ['companies', 'completion', 'contacts']],
  ['crm recordings ', ['download', 'get', 'list', 'transcript']],
  ['crm contacts list --output ', FORMATS],
  ['crm -o ', FORMATS],
  ['crm contacts list --output=j', ['json']],
  ['crm links add deals deal_1 contacts con_1 --type ', sorted(DEAL_CONTACT_TYPES)],
  ['crm links add deals deal_1 contacts con_1 --type EC', ['ECONOMIC_BUYER']],
  ['crm links add notes note_1 records cmp_1 --record-type ', ['company', 'contact', 'deal']],
  ['crm links list ', ['deals', 'notes', 'segments']],
  ['crm links get ', ['meetings']],
  ['crm links get meetings mtg_1 ', ['company', 'deal']],
  ['crm batch ', sorted(RESOURCES.filter((r) => r.batch).map((r) => r.name))],
  ['crm batch contacts peo', ['people.csv', 'people2.csv']],
  ['crm --profile x batch contacts ', ['bad-rows.csv', 'data', 'notes.txt', 'people.csv', 'people2.csv']],
  ['crm batch contacts people.csv --rejects bad', ['bad-rows.csv']],
  ['crm batch contacts people.csv --results d', ['data']],
  ['crm recordings transcript rec_1 --out peo', ['people.csv', 'people2.csv']],
  ['crm recordings download --dir ', ['data']],
  ['crm sandbox --data-file peo', ['people.csv', 'people2.csv']],
  ['crm sandbox --keys peo', ['people.csv', 'people2.csv']],
  ['crm contacts create --data @peo', ['@people.csv', '@people2.csv']],
  ['crm contacts create --data ', []],
  ['crm contacts list --limit ', []],
  ['crm batch contacts people.csv ', []],
  ['crm --profile ', ['local', 'work']],
  ['crm contacts list --profile w', ['work']],
  ['crm keys use ', ['local', 'work']],
  ['crm keys remove l', ['local']],
  ['crm keys add ', []],
  ['crm api ', ['DELETE', 'GET', 'PATCH', 'POST', 'PUT']],
  ['crm completion ', ['bash', 'fish', 'zsh']],
  ['crm keys add work --auth-header ', ['bearer', 'x-api-key']],
];

let dir: string;
let work: string;
let sh: ShellHome;

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'crm-complete-'));
  const config = path.join(dir, 'config');
  mkdirSync(config);
  // the key must never reach the shell; a name crm refuses must not either
  const profile = { base_url: 'http://127.0.0.1:1/api/v2', api_key: KEY, auth_header: 'x-api-key' };
  const profiles = { work: profile, local: profile, 'evil\u001b[31m': profile };
  writeFileSync(path.join(config, 'config.json'), JSON.stringify({ profiles, default_profile: 'work' }));
  sh = installCompletions(path.join(dir, 'home'), { CRM_CONFIG_DIR: config });
  work = path.join(dir, 'work');
  mkdirSync(path.join(work, 'data'), { recursive: true });
  for (const f of ['people.csv', 'people2.csv', 'bad-rows.csv', 'notes.txt'])
    writeFileSync(path.join(work, f), 'email\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SHELLS: Shell[] = ['bash', 'zsh', 'fish'];
// .ci/run installs the three shells and sets CRM_REQUIRE_SHELLS; elsewhere a missing shell is skipped
const required = process.env.CRM_REQUIRE_SHELLS === '1';

describe.each(SHELLS)('TAB in %s', (shell) => {
  const missing = !shellAvailable(shell);
  it.skipIf(missing && !required)('offers verbs before flags, flag values, files and profile names', () => {
    expect(missing, `${shell} is not installed (apt-get install bash-completion zsh fish)`).toBe(false);
    const { offers, stderr } = completeIn(
      shell,
      CASES.map(([line]) => line),
      sh,
      work,
    );
    expect(stderr).toBe('');
    const got = CASES.map(([line], i) => [line, offers[i]]);
    expect(got).toEqual(CASES);
    expect(JSON.stringify(offers)).not.toContain('SECRET');
  });

  it.skipIf(missing && !required)('offers flags only for a word starting with -', () => {
    const { offers } = completeIn(shell, ['crm contacts list --', 'crm contacts list -', 'crm --ou'], sh, work);
    expect(offers[0]).toEqual(expect.arrayContaining(['--limit', '--all', '--output', '--profile', '--help']));
    expect(offers[0]).not.toContain('list');
    expect(offers[1]).toEqual(expect.arrayContaining(['--limit', '-o', '-q']));
    expect(offers[2]).toEqual(['--output']);
  });

  // fish has one way: its completions folder
  if (shell === 'fish') return;
  it.skipIf(missing && !required)('works loaded with source <(crm completion SHELL) too', () => {
    const lines = ['crm contacts ', 'crm contacts list --output ', 'crm batch contacts peo', 'crm keys use '];
    const { offers, stderr } = completeIn(shell, lines, sh, work, true);
    expect(stderr).toBe('');
    expect(offers).toEqual([
      ['create', 'delete', 'get', 'list', 'update'],
      FORMATS,
      ['people.csv', 'people2.csv'],
      ['local', 'work'],
    ]);
  });
});

// The README's no-root install: bin/crm linked into ~/.local/bin (on PATH). An alias (the README's
// earlier advice) left completion without a `crm` to ask for profile names: bash offered nothing,
// zsh file names, fish printed an error in the prompt line.
describe('the no-root install of the README', () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /```sh\n((?:(?!```)[^])*ln -sf "\$PWD\/bin\/crm"(?:(?!```)[^])*)```/.exec(readme)?.[1];
  let noRoot: ShellHome;
  beforeAll(() => {
    const home = path.join(dir, 'home-no-root');
    mkdirSync(home);
    // as written, in the repository's folder (where the README says to run it), with crm on no PATH yet
    const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', block ?? 'exit 99'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, HOME: home, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` },
    });
    expect(r.status, `README's no-root block: ${r.stderr}`).toBe(0);
    expect(lstatSync(path.join(home, '.local/bin/crm')).isSymbolicLink()).toBe(true);
    noRoot = installCompletions(home, { CRM_CONFIG_DIR: path.join(dir, 'config') }, path.join(home, '.local/bin'));
  });

  it('is in the README: bin/crm linked into ~/.local/bin, not an alias', () => {
    expect(block).toBeDefined();
    expect(readme).not.toMatch(/alias crm=/);
  });

  it('puts ~/.local/bin on PATH for login shells too (a new tmux window, macOS Terminal read ~/.profile, not ~/.bashrc)', () => {
    const home = path.join(dir, 'home-no-root');
    for (const flag of ['-l', '-i']) {
      const r = spawnSync('bash', [flag, '-c', 'command -v crm'], {
        encoding: 'utf8',
        env: { HOME: home, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, TERM: 'dumb' },
      });
      expect(r.stdout.trim(), `bash ${flag}: ${r.stderr}`).toBe(path.join(home, '.local/bin/crm'));
    }
  });

  it.each(SHELLS)('%s completes profile names with crm installed that way', (shell) => {
    if (!shellAvailable(shell) && !required) return;
    const { offers, stderr } = completeIn(shell, ['crm --profile ', 'crm keys use ', 'crm contacts '], noRoot, work);
    expect(stderr).toBe('');
    expect(offers).toEqual([
      ['local', 'work'],
      ['local', 'work'],
      ['create', 'delete', 'get', 'list', 'update'],
    ]);
  });
});
