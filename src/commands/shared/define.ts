// What each command definition (src/commands/*/command.ts) shares. Flags are declared once with
// extra-typings, which infers their types; the run function takes the type derived from them.
import type { Command, CommandUnknownOpts, OptionValues } from '@commander-js/extra-typings';
import type { Ctx, IO } from '../context.js';
import { numericOption } from './numeric.js';

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
  /** the global --profile given: an error's hint naming `crm keys-check` checks that profile's key */
  profile?: string;
}

export interface Registry {
  state: RunState;
  /** the context a command runs with (global options read once parsing is done) */
  ctx(): Ctx;
}

/** The flags a declaration (a function returning a commander Command) parses to. */
export type FlagsOf<F extends (...args: never[]) => { opts(): OptionValues }> = ReturnType<ReturnType<F>['opts']>;

/** The flags as other callers (tests, scripts) may pass them: any missing, numbers and choices maybe text. */
export type Loose<F> = { [K in keyof F]?: F[K] extends boolean | undefined ? boolean : F[K] | string };

/** Imports a run function's module (only src/cli/groups.ts says which: start-up). */
export type Load<O> = () => Promise<(opts: O, ctx: Ctx) => Promise<void>>;

/** `load`'s function is the action, imported when the command runs; `toOpts` makes its options. */
export function runs<A extends unknown[], F extends OptionValues, O>(
  cmd: Command<A, F, OptionValues>,
  reg: Registry,
  load: Load<O>,
  toOpts: (flags: F, ...args: A) => O,
): Command<A, F, OptionValues> {
  return cmd.action(async () => (await load())(toOpts(cmd.opts(), ...cmd.processedArgs), reg.ctx()));
}

/** Appends an Examples section to a command's help; an example's `# comment` that would pass 80 columns goes on the line above it. */
export function examples<C extends CommandUnknownOpts>(cmd: C, lines: string[]): C {
  const shown = lines.map((l) => {
    const [command, comment] = l.split(/ {2,}# /);
    return comment !== undefined && `  $ ${l}`.length > 80 ? `  # ${comment}\n  $ ${command}` : `  $ ${l}`;
  });
  return cmd.addHelpText('after', `\nExamples:\n${shown.join('\n')}\n`);
}

/** Collects a repeatable option (`--set a=1 --set b=2`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** `--dry-run`, as every writing command spells it. */
export const DRY_RUN = ['--dry-run', 'print the request instead of sending it'] as const;

/** --limit, --cursor and --all; `help` rewords them where a command differs. */
export const paging = <A extends unknown[]>(
  cmd: Command<A>,
  help: { limit?: string; cursor?: string; all?: string } = {},
) =>
  cmd
    .addOption(numericOption('--limit <n>', help.limit ?? 'page size, 1-100', 'pageLimit'))
    .option('--cursor <cursor>', help.cursor ?? 'start from this page cursor')
    .option('--all', help.all ?? 'follow every page');
export const maxOption = () => numericOption('--max <n>', 'stop after this many records', 'maxRecords');
