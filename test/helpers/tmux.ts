// Drives the real `crm` in tmux, an 80-column terminal a test can read back: each command runs in
// its own detached session on a private server (its own socket, no user config), the screen is
// read with capture-pane (with -e: the colours as escape sequences), keys are typed with
// send-keys. Panes stay after their command ends (remain-on-exit), so the last screen can be read;
// the shell running the command writes its exit status to a file.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CRM_BIN, cleanEnv } from './run-crm.js';

const exec = promisify(execFile);

export const HAS_TMUX = spawnSync('tmux', ['-V']).status === 0;

export interface PaneOptions {
  /** added to the pane's environment (undefined: left out) */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** default 80 × 30 */
  width?: number;
  height?: number;
}

export interface CaptureOptions {
  /** keep the colours and attributes as SGR escape sequences (capture-pane -e) */
  escapes?: boolean;
  /** include the lines scrolled off the top (the whole history) */
  history?: boolean;
  /** join lines the terminal wrapped back into one (capture-pane -J) */
  joinWrapped?: boolean;
}

export interface Pane {
  readonly target: string;
  /** the screen as text lines, trailing blanks and tmux's own "Pane is dead" line left out */
  capture(opts?: CaptureOptions): Promise<string[]>;
  /** types `text` as it is (send-keys -l), then Enter when asked */
  type(text: string, opts?: { enter?: boolean }): Promise<void>;
  /** polls the screen until `test` holds; fails with the last screen after `timeoutMs` */
  waitFor(
    test: RegExp | ((lines: string[]) => boolean),
    opts?: CaptureOptions & { timeoutMs?: number },
  ): Promise<string[]>;
  /** waits for the command to end; its exit status and last screen (with history) */
  waitExit(timeoutMs?: number): Promise<{ status: number; lines: string[] }>;
}

export interface Tmux {
  /** runs `command` (a /bin/sh command line; `crm` is on PATH) in a new 80-column pane */
  run(command: string, opts?: PaneOptions): Promise<Pane>;
  /** kills the server and removes its folder */
  close(): Promise<void>;
}

/** A shell word for /bin/sh. */
export const sh = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

const POLL_MS = 50;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startTmux(): Promise<Tmux> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-tmux-'));
  // `crm` as a person types it: a command on PATH that runs this checkout with this Node
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'crm'), `#!/bin/sh\nexec ${sh(process.execPath)} ${sh(CRM_BIN)} "$@"\n`);
  chmodSync(join(bin, 'crm'), 0o755);

  const socket = `crm-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  // The server's environment is every pane's: no colour settings, nothing of an outer tmux, and not
  // CI's `CI=true` (a person's terminal is not CI; the colour libraries turn colour off under it).
  const env = cleanEnv({
    CI: undefined,
    NO_COLOR: undefined,
    FORCE_COLOR: undefined,
    TMUX: undefined,
    TMUX_PANE: undefined,
    COLUMNS: undefined,
    LINES: undefined,
    SHELL: '/bin/sh',
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
  });
  const tmux = async (...args: string[]): Promise<string> =>
    (await exec('tmux', ['-L', socket, '-f', '/dev/null', ...args], { env })).stdout;
  // A session that only waits keeps the server up between tests and carries the global options
  // every later session starts with.
  await tmux(
    'new-session',
    '-d',
    '-s',
    'idle',
    'sleep 3600',
    ';',
    'set-option',
    '-g',
    'remain-on-exit',
    'on',
    ';',
    'set-option',
    '-g',
    'history-limit',
    '10000',
  ).catch((err: Error) => {
    // tmux -f /dev/null dies with "server exited unexpectedly" when /dev/null is not a device
    const devNull = statSync('/dev/null');
    throw devNull.isCharacterDevice()
      ? err
      : new Error(`/dev/null is not a character device; tmux cannot start (${err.message})`);
  });

  let n = 0;
  return {
    async run(command, opts = {}) {
      const target = `t${++n}`;
      const envArgs = Object.entries(opts.env ?? {}).flatMap(([k, v]) => (v === undefined ? [] : ['-e', `${k}=${v}`]));
      const size = ['-x', String(opts.width ?? 80), '-y', String(opts.height ?? 30)];
      const statusFile = join(dir, `${target}.status`);
      // the exit status of the command line (of a pipeline, its last command), as sh gives it; then
      // the shell lives a moment more, so tmux has read all the command wrote before the pane dies (a
      // loaded machine once showed tmux's "Pane is dead" in the middle of a table's last row, the rest lost)
      const line = `${command}\necho $? > ${sh(statusFile)}\nsleep 0.3`;
      await tmux('new-session', '-d', '-s', target, ...size, ...(opts.cwd ? ['-c', opts.cwd] : []), ...envArgs, line);
      return pane(target, statusFile, tmux);
    },
    async close() {
      await tmux('kill-server').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function pane(target: string, statusFile: string, tmux: (...args: string[]) => Promise<string>): Pane {
  const capture = async (opts: CaptureOptions = {}): Promise<string[]> => {
    const flags = [
      '-p',
      ...(opts.escapes ? ['-e'] : []),
      ...(opts.joinWrapped ? ['-J'] : []),
      ...(opts.history ? ['-S', '-'] : []),
    ];
    const text = await tmux('capture-pane', ...flags, '-t', target);
    const lines = text.split('\n').map((l) => l.replace(/\s+$/, ''));
    const dead = lines.findIndex((l) => /^Pane is dead/.test(l.replace(/\x1b\[[\d;]*m/g, '')));
    if (dead >= 0) lines.splice(dead, 1);
    while (lines.length > 0 && lines[lines.length - 1]!.replace(/\x1b\[[\d;]*m/g, '') === '') lines.pop();
    return lines;
  };
  const self: Pane = {
    target,
    capture,
    async type(text, opts = {}) {
      if (text !== '') await tmux('send-keys', '-t', target, '-l', text);
      if (opts.enter) await tmux('send-keys', '-t', target, 'Enter');
    },
    async waitFor(test, opts = {}) {
      const ok = typeof test === 'function' ? test : (lines: string[]) => test.test(lines.join('\n'));
      const until = Date.now() + (opts.timeoutMs ?? 10_000);
      for (;;) {
        const lines = await capture(opts);
        if (ok(lines)) return lines;
        if (Date.now() > until)
          throw new Error(`timed out waiting for ${String(test)} in pane ${target}; screen:\n${lines.join('\n')}`);
        await delay(POLL_MS);
      }
    },
    async waitExit(timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        // Done when the shell has written the status and tmux has read the terminal to its end
        // (pane_dead). tmux's own #{pane_dead_status} is not waited for: it now and then reaps
        // the child seconds late.
        const dead = (await tmux('display-message', '-p', '-t', target, '#{pane_dead}')).trim() === '1';
        const status = dead && existsSync(statusFile) ? readFileSync(statusFile, 'utf8').trim() : '';
        if (status !== '') return { status: Number(status), lines: await capture({ history: true }) };
        if (Date.now() > until) {
          throw new Error(
            `pane ${target} still running after ${timeoutMs} ms (pane_dead ${dead}); screen:\n${(await capture()).join('\n')}`,
          );
        }
        await delay(POLL_MS);
      }
    },
  };
  return self;
}
