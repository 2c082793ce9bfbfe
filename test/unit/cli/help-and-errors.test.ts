// What a person reads first: `crm --help` grouped by purpose (as gh does), every command's help
// listing the global options it accepts, and usage errors in crm's one error style.
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { allCommands, buildProgram, commandPath } from '../../../src/cli/program.js';
import { fakeIO } from '../../helpers/fake-io.js';

async function run(argv: string[]) {
  const f = fakeIO();
  const code = await main(argv, { io: f.io, env: {}, handleSignals: false });
  return { code, out: f.out(), err: f.err() };
}

describe('help', () => {
  it('crm --help groups the commands: Records, Links and bulk, Version 1, Setup', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    const headings = r.out.split('\n').filter((l) => /^[A-Z][\w ()0-9]*:$/.test(l));
    expect(headings).toEqual([
      'Options:',
      'Records:',
      'Links and bulk:',
      'Version 1 (deprecated):',
      'Setup:',
      'Examples:',
    ]);
    expect(r.out).toMatchSnapshot();
  });

  it.each([['contacts', 'list'], ['batch'], ['links', 'add'], ['keys', 'add']])(
    'crm %s … --help lists the global options (not --version)',
    async (...words) => {
      const r = await run([...words, '--help']);
      expect(r.code).toBe(0);
      const global = r.out.slice(r.out.indexOf('Global Options:'));
      for (const o of ['--profile', '-o, --output <format>', '--fields <list>', '-q, --quiet', '--timeout'])
        expect(global).toContain(o);
      expect(global).not.toContain('--version');
      expect(r.out).toMatchSnapshot();
    },
  );
});

describe('usage errors: one style', () => {
  it.each([
    [['contacts', 'list', '--bogus'], "Error: unknown option '--bogus'", 'Hint: see crm contacts list --help'],
    [['contacts', 'get'], "Error: missing required argument 'id'", 'Hint: see crm contacts get --help'],
    [['contacts', 'update', 'a', 'b'], 'Error: too many arguments', 'Hint: see crm contacts update --help'],
    [['contcts', 'list'], "Error: unknown command 'contcts'\n(Did you mean contacts?)", 'Hint: see crm --help'],
    [
      ['-o', 'yaml', 'contacts', 'list'],
      "Error: option '-o, --output <format>' argument 'yaml' is invalid",
      'Hint: see crm contacts list --help',
    ],
    [
      ['batch', 'contacts', 'x.csv', '--chunk-size', '500'],
      "Error: option '--chunk-size <n>' argument '500' is invalid",
      'Hint: see crm batch --help',
    ],
    [['recordings', 'delete', 'x'], "Error: 'delete' is not a verb of recordings", 'Hint: see crm recordings --help'],
  ])('crm %j: Error: … then Hint: see … --help, exit 2', async (argv, error, hint) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.err.startsWith(error), r.err).toBe(true);
    expect(r.err.trimEnd().split('\n').at(-1)).toBe(hint);
    expect(r.err).not.toMatch(/^error:/m);
    expect(r.out).toBe('');
  });
});

describe('usage errors with -o json', () => {
  it.each([
    [['contacts', 'list', '--limit', '0', '-o', 'json']],
    [['-o', 'json', 'contacts', 'list', '--bogus']],
    [['--output=json', 'contcts', 'list']],
  ])('%j: the JSON error object follows the message, exit 2', async (argv) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    const last = r.err.trim().split('\n').pop()!;
    expect(JSON.parse(last)).toMatchObject({ error: { code: 'USAGE_ERROR', message: expect.stringMatching(/\S/) } });
  });

  it('a `-o json` after `--` is an argument, not the output format', async () => {
    const { asksForJson } = await import('../../../src/cli/main.js');
    expect(asksForJson(['api', 'GET', '--', '-o', 'json'])).toBe(false);
    expect(asksForJson(['-ojson'])).toBe(true);
  });
});

describe('help text of our own fits 80 columns (a terminal wrapped it mid-word)', () => {
  const state = { io: fakeIO().io, env: {}, signal: new AbortController().signal, jsonErrors: false, verbose: false };
  const every = allCommands(buildProgram(state))
    .map((c) => commandPath(c).split(' ').slice(1))
    .filter((words) => words.length > 0);
  it.each([[[]], ...every.map((w) => [w])])('crm %j --help: examples and notes', async (words) => {
    const r = await run([...words, '--help']);
    const ours = r.out.slice(r.out.indexOf('Examples:'));
    for (const line of ours.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });
});
