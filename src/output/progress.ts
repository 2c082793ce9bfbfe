// A spinner on standard error (ora, the only importer of it), loaded only when a spinner is really
// shown: ora costs ~50 ms to import. Disabled (no TTY, --quiet) it is a no-op and loads nothing.
import type { Ora } from 'ora';
import type { OutputStream } from './backpressure.js';
import { sanitizeForTerminal } from './sanitize.js';

export interface ProgressOptions {
  /** standard error; never standard output */
  stream: OutputStream;
  /** typically `stderr.isTTY && !quiet` */
  enabled: boolean;
  /** first text, shown when the spinner starts */
  text?: string;
}

export interface Progress {
  readonly enabled: boolean;
  /** starts the spinner on first call (loading ora), then changes its text */
  update(text: string): void;
  /** stops with ✔ and `text` (or the last text); resolves once written */
  succeed(text?: string): Promise<void>;
  /** stops with ✖ and `text` (or the last text) */
  fail(text?: string): Promise<void>;
  /** stops and clears the spinner line */
  stop(): Promise<void>;
}

const noop: Progress = {
  enabled: false,
  update() {},
  async succeed() {},
  async fail() {},
  async stop() {},
};

export function createProgress(opts: ProgressOptions): Progress {
  // A terminal that reports no width (some CI ptys, `docker exec -t`) makes ora loop for ever
  // clearing lines, and a stream without cursor control cannot redraw: no spinner there.
  const s = opts.stream as OutputStream & { columns?: number; cursorTo?: unknown };
  if (!opts.enabled || !(Number(s.columns) > 0) || typeof s.cursorTo !== 'function') return noop;
  let text = sanitizeForTerminal(opts.text ?? '');
  let spinner: Ora | undefined;
  let loading: Promise<void> | undefined;
  let done = false;

  const start = (): Promise<void> => {
    loading ??= import('ora').then(({ default: ora }) => {
      if (done) return;
      // discardStdin: false keeps stdin out of raw mode, so Ctrl-C stays SIGINT and piped input is untouched.
      spinner = ora({ text, stream: opts.stream, discardStdin: false, isEnabled: true }).start();
    }, () => {
      // ora failed to load: progress is a nicety, carry on without a spinner
    });
    return loading;
  };
  const finish = async (how: 'succeed' | 'fail' | 'stop', final?: string): Promise<void> => {
    if (done) return;
    if (loading === undefined && how === 'stop') {
      done = true; // never shown: nothing to clear
      return;
    }
    await start();
    done = true;
    if (!spinner) return;
    const last = final === undefined ? text : sanitizeForTerminal(final);
    if (how === 'stop') spinner.stop();
    else spinner[how](last);
  };

  return {
    enabled: true,
    update(next) {
      if (done) return;
      text = sanitizeForTerminal(next);
      if (spinner) spinner.text = text;
      else void start();
    },
    succeed: (final) => finish('succeed', final),
    fail: (final) => finish('fail', final),
    stop: () => finish('stop'),
  };
}
