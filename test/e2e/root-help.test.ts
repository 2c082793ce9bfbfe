// `crm --help` and `crm --version` alone are answered by bin/crm itself (start-up time): the same
// text as the whole program prints, on a pipe and on a terminal of another width, and a reader gone
// away ends them quietly, as main() does.
import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { fakeIO } from '../helpers/fake-io.js';
import { cleanEnv, collect, CRM_BIN, runCrm, startCrm } from '../helpers/run-crm.js';

const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

/** The help commander prints when the whole program runs, at `columns` (undefined: not a terminal). */
async function programHelp(columns?: number): Promise<string> {
  const stdout = process.stdout as { isTTY?: boolean; columns?: number };
  const saved = { isTTY: stdout.isTTY, columns: stdout.columns };
  Object.assign(stdout, { isTTY: columns !== undefined, columns });
  try {
    const f = fakeIO();
    expect(await main(['--help'], { io: f.io, env: {}, handleSignals: false })).toBe(0);
    return f.out();
  } finally {
    Object.assign(stdout, saved);
  }
}

describe('crm --help and --version, answered before the CLI loads', () => {
  it.each(['--help', '-h'])('crm %s on a pipe is the program’s help', async (flag) => {
    const r = await runCrm([flag]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(await programHelp());
  });

  it.each(['--version', '-V'])('crm %s prints the version the built program prints', async (flag) => {
    const r = await runCrm([flag]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const program = await runCrm(['--quiet', '--version']); // not alone: dist/cli/main.js answers
    expect(program.code).toBe(0);
    expect(r.stdout).toBe(program.stdout);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
  });

  it.skipIf(!HAS_SCRIPT)('crm --help on a 100-column terminal is wrapped as the program wraps it', async () => {
    const command = `stty cols 100 rows 50; exec '${process.execPath}' '${CRM_BIN}' --help`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: cleanEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end();
    const r = await collect(child);
    expect(r.code).toBe(0);
    const expected = await programHelp(100);
    expect(expected).not.toBe(await programHelp());
    expect(r.stdout.replace(/\r\n/g, '\n')).toBe(expected);
  });

  it.each(['--help', '--version'])('crm %s to a reader that went away exits 0 without a word', async (flag) => {
    const child = startCrm([flag]);
    child.stdout!.destroy();
    const r = await collect(child);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});
