// A spinner on standard error; ora (its only importer) loads only when a spinner is really shown.
// Disabled (no TTY, --quiet) it is a no-op.
import type { Ora } from 'ora';
import type { OutputStream } from './backpressure.js';
import { sanitizeForTerminal } from './sanitize.js';
import { cutToWidth } from './width.js';

interface ProgressOptions {
  /** standard error, never standard output */
  stream: OutputStream;
  /** typically `stderr.isTTY && !quiet` */
  enabled: boolean;
  text?: string;
  /** colour the spinner (the caller's decision: ora's colour library ignores NO_COLOR); default false */
  color?: boolean;
}

/** update starts the spinner (loading ora), then changes its text. */
export interface Progress {
  readonly enabled: boolean;
  update(text: string): void;
  /** stops and clears the spinner line */
  stop(): Promise<void>;
}

/** the spinner's frame, the space after it, and a column spare so the line never fills the row */
const SPINNER_COLUMNS = 3;

const noop: Progress = { enabled: false, update() {}, stop: async () => {} };

export function createProgress(opts: ProgressOptions): Progress {
  // No spinner without a width (ora loops for ever clearing lines) or cursor control (cannot redraw).
  const s = opts.stream as OutputStream & { columns?: number; cursorTo?: unknown };
  if (!opts.enabled || !(Number(s.columns) > 0) || typeof s.cursorTo !== 'function') return noop;
  // One terminal row (a wrapped line leaves its top row behind), the width read at each update.
  const fit = (t: string): string =>
    cutToWidth(sanitizeForTerminal(t), Math.max(10, Number(s.columns) - SPINNER_COLUMNS));
  let text = fit(opts.text ?? '');
  let spinner: Ora | undefined;
  let loading: Promise<void> | undefined;
  let done = false;

  return {
    enabled: true,
    update(next) {
      if (done) return;
      text = fit(next);
      if (spinner) spinner.text = text;
      else
        loading ??= import('ora').then(
          ({ default: ora }) => {
            if (done) return;
            // discardStdin: false keeps stdin out of raw mode, so Ctrl-C stays SIGINT and piped input is untouched.
            spinner = ora({
              text,
              stream: opts.stream,
              discardStdin: false,
              isEnabled: true,
              color: opts.color ? 'cyan' : false,
            }).start();
          },
          () => {}, // ora failed to load: carry on without a spinner
        );
    },
    async stop() {
      if (done) return;
      await loading; // never shown (undefined): nothing to clear
      done = true;
      spinner?.stop();
    },
  };
}
