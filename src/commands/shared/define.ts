// What each command group's definition (src/commands/*/command.ts) shares: the run state, the lazy
// action, examples and repeatable flags. A definition declares its flags once with commander (via
// extra-typings, which infers their types); the run function takes the type derived from them.
import type { Command, CommandUnknownOpts, OptionValues } from '@commander-js/extra-typings';
import type { Ctx, IO } from '../context.js';

/** What the whole run shares: streams, environment, the Ctrl-C signal, and how to print errors. */
export interface RunState {
  io: IO;
  env: Record<string, string | undefined>;
  signal: AbortSignal;
  jsonErrors: boolean;
  verbose: boolean;
  /** the words after `crm` (a command that can be resumed repeats them) */
  argv?: readonly string[];
  /** the command whose arguments commander refused (`crm contacts list`): its --help is the hint */
  usageOf?: string;
}

export interface Registry {
  state: RunState;
  /** the context a command runs with (global options read once parsing is done) */
  ctx(): Ctx;
}

/** The flags a declaration (a function returning a commander Command) parses to. */
export type FlagsOf<F extends (...args: never[]) => { opts(): OptionValues }> = ReturnType<ReturnType<F>['opts']>;

/**
 * The flags as callers other than commander may pass them (tests, scripts): any may be missing, and
 * numbers and choices may still be text, which the run function then checks itself.
 */
export type Loose<F> = { [K in keyof F]?: F[K] extends boolean | undefined ? boolean : F[K] | string };

export type RunFn<O> = (opts: O, ctx: Ctx) => Promise<void>;
/** Imports a run function's module (src/cli/groups.ts says which, so that only it loads modules). */
export type Load<O> = () => Promise<RunFn<O>>;

/**
 * Makes `load`'s function the command's action: its module is imported only when the command
 * runs; `toOpts` turns the parsed flags and arguments into its options.
 */
export function runs<A extends unknown[], F extends OptionValues, O>(
  cmd: Command<A, F, OptionValues>,
  reg: Registry,
  load: Load<O>,
  toOpts: (flags: F, ...args: A) => O,
): Command<A, F, OptionValues> {
  return cmd.action(async () => {
    const opts = toOpts(cmd.opts(), ...cmd.processedArgs);
    await (
      await load()
    )(opts, reg.ctx());
  });
}

/** Appends an Examples section to a command's help. */
export function examples<C extends CommandUnknownOpts>(cmd: C, lines: string[]): C {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}

/** Collects a repeatable option (`--set a=1 --set b=2`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** `--dry-run`, as every writing command spells it. */
export const DRY_RUN = ['--dry-run', 'print the request instead of sending it'] as const;
