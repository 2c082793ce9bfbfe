// The hints a list prints on stderr (print-list.ts): a further page in every format when a person
// watches stderr (an export typed in a terminal must not lose page two without a word), nothing
// extra for a script that captures stderr, and "No results." for an empty table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({ seed: 42 });
});
afterAll(async () => t?.close());

async function list(args: string[], stderrTty: boolean): Promise<{ out: string; err: string }> {
  const f = fakeIO();
  f.io.stderr.isTTY = stderrTty;
  const code = await main(['contacts', 'list', ...args], {
    io: f.io,
    env: { ...t.env('admin'), NO_COLOR: '1' },
    handleSignals: false,
  });
  expect(code, f.err()).toBe(0);
  return { out: f.out(), err: f.err() };
}

describe('list hints on stderr', () => {
  it.each(['csv', 'json', 'ndjson'])('-o %s with stderr on a terminal names the next page', async (format) => {
    const { out, err } = await list(['--limit', '2', '-o', format], true);
    expect(err).toMatch(/^More results: crm contacts list --limit 2 --cursor \S+ \(or --all for every page\)\n$/);
    expect(out).not.toContain('More results');
  });

  it('-o csv with stderr captured by a script prints data only', async () => {
    const { out, err } = await list(['--limit', '2', '-o', 'csv'], false);
    expect(err).toBe('');
    expect(out.trim().split('\n')).toHaveLength(3);
  });

  it('an empty table says so', async () => {
    const f = fakeIO({ tty: true, columns: 80 });
    const code = await main(['contacts', 'list', '--param', 'email=nobody@example.invalid', '-o', 'table'], {
      io: f.io,
      env: { ...t.env('admin'), NO_COLOR: '1' },
      handleSignals: false,
    });
    expect(code).toBe(0);
    expect(f.err()).toBe('No results.\n');
  });
});
