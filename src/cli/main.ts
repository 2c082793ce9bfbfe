// The entry point, and the one place that turns errors into stderr messages and exit codes
// (CONTRACT §3). Only commander loads eagerly; each command loads its own modules when it runs.
import { CommanderError } from '@commander-js/extra-typings';
import type { IO } from '../commands/context.js';
import { CrmError, restated, UsageError } from '../http/errors.js';
import type { RunState } from '../commands/shared/define.js';
import { buildProgram } from './program.js';

/** for scripts/build.mjs: the root help bin/crm prints without the command tree (root-help.ts) */
export { rootHelpTemplate } from './root-help-template.js';

interface MainOptions {
  io?: IO;
  env?: Record<string, string | undefined>;
  /** install SIGINT/SIGTERM handlers (the real binary); tests pass false */
  handleSignals?: boolean;
}

export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  // stdin is made on first use (a few ms that most commands never need)
  const io: IO = options.io ?? {
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
  };
  const env = options.env ?? process.env;
  const abort = new AbortController();
  const state: RunState = { io, env, signal: abort.signal, jsonErrors: false, verbose: false, argv };
  const stopSignals = options.handleSignals === false ? () => {} : installSignalHandlers(abort, io);
  // `crm … | head`: the reader went away; stop quietly, as other CLIs do.
  io.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
  });
  const program = buildProgram(state, argv);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    return await reportError(err, state);
  } finally {
    stopSignals();
  }
}

/** A repeat this soon is the same Ctrl-C delivered twice (`npm run`/`npx` forward it), not a second press. */
const REPEAT_WINDOW_MS = 500;

/**
 * First Ctrl-C asks commands to stop and clean up (exit 130); a later one exits at once. The handlers
 * stay after main() returns, so a late repeat cannot replace the exit code with the signal.
 */
function installSignalHandlers(abort: AbortController, io: IO): () => void {
  let first = 0;
  let finished = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (abort.signal.aborted || finished) {
      if (Date.now() - first < REPEAT_WINDOW_MS) return;
      // temp files and journal lines are settled by the 'exit' handlers (see src/import/atomic-file.ts)
      if (!finished)
        io.stderr.write('\nStopped at once: requests in flight were abandoned; rerun the same command to resume.\n');
      process.exit(finished ? Number(process.exitCode) || 130 : 130);
    }
    first = Date.now();
    abort.abort(new Error(`received ${signal}`));
    if (signal === 'SIGINT') io.stderr.write('\nInterrupted: finishing work in flight (Ctrl-C again to quit now)\n');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    finished = true;
  };
}

async function reportError(err: unknown, state: RunState): Promise<number> {
  if (err instanceof CommanderError) {
    // help and version are "errors" to commander under exitOverride; its own message is already printed
    if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code)) return 0;
    if (err.code === 'commander.executeSubCommandAsync') return err.exitCode;
    // one style for every error: commander's message (its "Did you mean" included), then the help to read
    err = new UsageError(err.message.replace(/^error: /, ''), { hint: `see ${state.usageOf ?? 'crm'} --help` });
    // parsing failed before the options were read: `-o json` is looked for in the words themselves
    state.jsonErrors ||= asksForJson(state.argv ?? []);
  }
  // loaded only on an error (startup time)
  const [{ isBrokenPipe }, { errorJsonLine, formatError }, { sanitizeForTerminal }, { forStderr }, { shellWord }] =
    await Promise.all([
      import('../output/backpressure.js'),
      import('../output/errors.js'),
      import('../output/sanitize.js'),
      import('../output/width.js'),
      import('../commands/shared/command-line.js'),
    ]);
  if (isBrokenPipe(err)) return 0;
  // the error and its hint, wrapped to a terminal's width like every notice; with -o json its JSON line after, never
  // wrapped (the trial: with -o json the text was not wrapped either, and long paths broke mid-word)
  const report = (e: CrmError) => {
    const json = state.jsonErrors ? `${errorJsonLine(e)}\n` : '';
    state.io.stderr.write(forStderr(state.io.stderr, formatError(e)) + json);
  };
  if (err instanceof CrmError) {
    // the trial, on profile B: a 401's hint said `crm keys-check`, which checks the default profile's key
    const check = '`crm keys-check`';
    const hint =
      state.profile && err.hint?.includes(check)
        ? err.hint.replaceAll(check, `\`crm --profile ${shellWord(state.profile)} keys-check\``)
        : undefined;
    report(hint ? restated(err, { hint }) : err);
    return err.exitCode;
  }
  report(new UnexpectedError(err));
  if (state.verbose && err instanceof Error && err.stack)
    state.io.stderr.write(`${sanitizeForTerminal(err.stack, { keepNewlines: true })}\n`);
  else state.io.stderr.write('This is a bug in crm; run again with --verbose for details.\n');
  return 1;
}

class UnexpectedError extends CrmError {
  readonly exitCode = 1;
  constructor(cause: unknown) {
    super(`unexpected failure: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** `-o json`, `-ojson`, `--output json` or `--output=json` among the words (before a `--`). */
export function asksForJson(argv: readonly string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === '--') return false;
    if ((w === '-o' || w === '--output') && argv[i + 1] === 'json') return true;
    if (w === '-ojson' || w === '--output=json') return true;
  }
  return false;
}
