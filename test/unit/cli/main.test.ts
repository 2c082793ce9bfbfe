import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { allCommands, buildProgram, invokedGroup } from '../../../src/cli/program.js';
import { RESOURCES } from '../../../src/api/resources.js';
import { fakeIO } from '../../helpers/fake-io.js';

async function run(argv: string[], env: Record<string, string> = {}) {
  const f = fakeIO();
  const code = await main(argv, { io: f.io, env, handleSignals: false });
  return { code, out: f.out(), err: f.err() };
}

describe('crm (in-process)', () => {
  it('--version prints the version and exits 0', async () => {
    const r = await run(['--version']);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('--help lists the command groups and the exit codes', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    for (const name of [
      'contacts',
      'links',
      'batch',
      'recordings',
      'v1',
      'api',
      'keys',
      'keys-check',
      'sandbox',
      'completion',
    ]) {
      expect(r.out).toContain(name);
    }
    expect(r.out).toContain('Exit codes');
  });

  it('a verb a resource does not have is a usage error naming the verbs it has', async () => {
    const r = await run(['recordings', 'delete', 'rec_1']);
    expect(r.code).toBe(2);
    expect(r.err).toContain("'delete' is not a verb of recordings; recordings has: list, get, transcript, download");
    const i = await run(['interactions', 'update', 'int_1']);
    expect(i.code).toBe(2);
    expect(i.err).toContain('interactions has: list, get, create');
  });

  it('an unknown option, a missing or extra argument, a bad --limit or --fields is exit 2', async () => {
    expect((await run(['contacts', 'update', 'a', 'b'])).code).toBe(2);
    expect((await run(['contacts', 'list', '--limit', '101'])).code).toBe(2);
    expect((await run(['--fields', '', 'contacts', 'list'])).code).toBe(2);
    expect((await run(['contacts', 'list', '--bogus'])).code).toBe(2);
    expect((await run(['contacts', 'get'])).code).toBe(2);
    expect((await run(['contacts', 'list', '--limit', 'zero'])).code).toBe(2);
    expect((await run(['-o', 'yaml', 'contacts', 'list'])).code).toBe(2);
  });

  it('no key configured is exit 3 with a hint', async () => {
    const r = await run(['contacts', 'list'], {
      CRM_CONFIG_DIR: '/nonexistent-crm-test-dir/x',
      CRM_BASE_URL: 'http://127.0.0.1:9/api/v2',
    });
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/No version 2 API key configured/);
    expect(r.err).toMatch(/crm keys add/);
  });

  it('errors are also JSON on stderr with -o json', async () => {
    const r = await run(['-o', 'json', 'recordings', 'delete', 'x']);
    expect(r.code).toBe(2);
    const line = r.err.split('\n').find((l) => l.startsWith('{'));
    expect(JSON.parse(line!)).toMatchObject({ error: { message: expect.stringContaining('not a verb') } });
    expect(r.out).toBe('');
  });

  it('--dry-run prints the request with the key masked and sends nothing', async () => {
    const key = 'service_live_abcdefghijklmnop1234';
    const r = await run(['-o', 'json', 'contacts', 'create', '--set', 'email=a@b.c', '--dry-run'], {
      CRM_API_KEY: key,
      CRM_BASE_URL: 'http://127.0.0.1:9/api/v2',
    });
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.out);
    expect(plan).toMatchObject({ method: 'POST', url: 'http://127.0.0.1:9/api/v2/contacts', body: { email: 'a@b.c' } });
    expect(plan.headers['Idempotency-Key']).toBe('<random UUID>');
    expect(r.out + r.err).not.toContain(key);
  });

  it('delete without a terminal needs --yes', async () => {
    const r = await run(['contacts', 'delete', 'con_1'], {
      CRM_API_KEY: 'service_live_x1234567',
      CRM_BASE_URL: 'http://127.0.0.1:9/api/v2',
    });
    expect(r.code).toBe(2);
    expect(r.err).toContain('pass --yes');
  });
});

describe('the command tree', () => {
  const f = fakeIO();
  const program = buildProgram({
    io: f.io,
    env: {},
    signal: new AbortController().signal,
    jsonErrors: false,
    verbose: false,
  });

  it('has every resource with exactly the verbs of the table', () => {
    for (const res of RESOURCES) {
      const group = program.commands.find((c) => c.name() === res.name)!;
      const verbs = group.commands.map((c) => c.name()).filter((n) => n !== 'transcript' && n !== 'download');
      expect(verbs).toEqual([...res.verbs]);
    }
  });

  it('every command has a description and at least one example', () => {
    const all = allCommands(program).filter((c) => c !== program);
    expect(all.length).toBeGreaterThan(60);
    for (const cmd of all) {
      let help = '';
      cmd.configureOutput({ writeOut: (s) => (help += s), writeErr: (s) => (help += s) });
      cmd.outputHelp();
      expect(cmd.description(), cmd.name()).not.toBe('');
      expect(help, `${cmd.parent?.name()} ${cmd.name()}`).toContain('Examples:');
    }
  });
});

describe('invokedGroup: only the invoked subtree is built', () => {
  const program = buildProgram({
    io: fakeIO().io,
    env: {},
    signal: new AbortController().signal,
    jsonErrors: false,
    verbose: false,
  });
  it.each([
    [['contacts', 'get', 'x'], 'contacts'],
    [['-o', 'json', 'contacts', 'get', 'x'], 'contacts'],
    [['--profile', 'contacts', 'deals', 'list'], 'deals'],
    [['--output=json', '-q', 'batch', 'contacts', 'f.csv'], 'batch'],
    [['keys-check'], 'keys-check'],
    [['--help'], undefined],
    [['help', 'contacts'], undefined],
    [['completion', 'bash'], undefined],
    [['contcts', 'list'], undefined],
    [[], undefined],
  ])('%j → %s', (argv, group) => {
    expect(invokedGroup(program, argv)).toBe(group);
  });

  it('a typo still gets a suggestion from the whole tree', async () => {
    const r = await run(['contcts', 'list']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/Did you mean contacts\?/);
  });
});
