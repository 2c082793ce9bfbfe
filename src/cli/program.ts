// The commander program: global options (CONTRACT §3) and the command groups (src/cli/groups.ts).
import { Command, Help, InvalidArgumentError, Option, type CommandUnknownOpts } from '@commander-js/extra-typings';
import type { GlobalOptions } from '../commands/context.js';
import type { Registry, RunState } from '../commands/shared/define.js';
import { numericOption } from '../commands/shared/numeric.js';
import { OUTPUT_FORMATS } from '../output/format.js';
import { VERSION } from '../version.js';
import { createContext } from './context.js';
import { GROUPS } from './groups.js';

const MAX_RETRIES_HELP = 'retries on 5xx and network errors (a 429 with Retry-After waits within a 10-minute budget)';

function rootCommand() {
  return new Command('crm')
    .description('Operate the CRM service from the command line: records, links, bulk imports, transcripts.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .option('--profile <name>', 'use this saved profile (see crm keys list)')
    .option('--base-url <url>', 'version 2 API root, ending in /api/v2')
    .option('--v1-base-url <url>', 'version 1 API root (default: --base-url with /api/v1)')
    .addOption(
      new Option('-o, --output <format>', 'output format (default: table on a terminal, json otherwise)').choices(
        OUTPUT_FORMATS,
      ),
    )
    .addOption(
      new Option('--fields <list>', 'comma-separated fields to print, e.g. id,email,owner_id').argParser(fieldList),
    )
    .option('--wide', 'tables: every column, uncut, even wider than the terminal')
    .option('--no-color', 'no colors (also NO_COLOR)')
    .option('-q, --quiet', 'no progress, notices or warnings')
    .option('-v, --verbose', 'log each request on stderr (method, URL, status, ms, retries; keys masked)')
    .addOption(
      numericOption('--timeout <seconds>', 'limit for each whole response, headers and body', 'timeoutSeconds').default(
        30,
      ),
    )
    .addOption(numericOption('--max-retries <n>', MAX_RETRIES_HELP, 'maxRetries').default(5))
    .addHelpText('after', ROOT_HELP);
}

export function buildProgram(state: RunState, argv?: readonly string[]): CommandUnknownOpts {
  const program = rootCommand();
  const globals = (): GlobalOptions => globalOptions(program.opts(), state.env, state.io);
  const reg: Registry = { state, ctx: () => createContext(state, globals()) };
  program.hook('preAction', () => {
    state.jsonErrors = program.opts().output === 'json';
    state.verbose = Boolean(program.opts().verbose);
    state.profile = program.opts().profile;
  });
  // only the group argv names is built (start-up); help, completion and unknown words get the whole tree
  const only = argv === undefined ? undefined : invokedGroup(program, argv);
  const want = (name: string) => only === undefined || only === name;
  for (const group of GROUPS) {
    if (!group.names.some(want)) continue;
    const before = program.commands.length;
    group.register(program, reg, want);
    for (const cmd of program.commands.slice(before)) cmd.helpGroup(group.heading ?? 'Setup:');
  }
  program.commandsGroup('Setup:').helpCommand(true);
  configureAll(program, state);
  return program;
}

/** Every command routes output and errors as the root does, and lists the global options in its help. */
function configureAll(program: CommandUnknownOpts, state: RunState): void {
  const [writeOut, writeErr] = [(s: string) => state.io.stdout.write(s), (s: string) => state.io.stderr.write(s)];
  for (const cmd of allCommands(program)) {
    // main prints commander's errors as every error (with a Hint naming this command's --help), exit 2
    // (a global option such as `-o yaml` fails at the root: the words name the command it was given to)
    const outputError = () => void (state.usageOf = commandPath(namedBy(cmd, state.argv ?? [])));
    cmd
      .configureHelp(HELP)
      .exitOverride()
      .configureOutput({ writeOut, writeErr, outputError })
      .showSuggestionAfterError(true);
    // a verb takes exactly its arguments: `crm contacts get a b` is a usage error, not a silent drop
    if (cmd.commands.length === 0) cmd.allowExcessArguments(false);
  }
}

/** Help ends with the global options (as gh's INHERITED FLAGS, after the commands), but not --version: only `crm --version` takes it. */
const HELP = {
  showGlobalOptions: true,
  // commander leaves a description column under 40 characters unwrapped, and the terminal then cuts
  // words (`crm links --help` at 80 columns: long argument lists leave ~22); wrap it whatever its width
  minWidthToWrap: 10,
  visibleGlobalOptions(this: Help, cmd: CommandUnknownOpts) {
    return Help.prototype.visibleGlobalOptions.call(this, cmd).filter((o) => o.long !== '--version');
  },
  // a group's commands by name alone (as gh lists them): their arguments, in the term, made the
  // column so wide that `crm links --help` left descriptions 25 columns at 80; each verb's --help and
  // the Usage line show them
  subcommandTerm(this: Help, sub: CommandUnknownOpts) {
    if (!sub.parent?.parent) return Help.prototype.subcommandTerm.call(this, sub);
    return [sub.name(), ...sub.aliases()].join('|');
  },
  formatHelp(this: Help, cmd: CommandUnknownOpts, helper: Help) {
    return globalOptionsLast(Help.prototype.formatHelp.call(this, cmd, helper));
  },
};

/** Moves the Global Options section of a help text to its end: after the commands, as gh's INHERITED FLAGS. */
export function globalOptionsLast(text: string): string {
  const sections = text.replace(/\n+$/, '').split('\n\n');
  const at = sections.findIndex((s) => s.startsWith('Global Options:\n'));
  if (at < 0) return text;
  sections.push(...sections.splice(at, 1));
  return `${sections.join('\n\n')}\n`;
}

/** The top-level command argv invokes, when it is one whose subtree can be built alone. */
export function invokedGroup(program: CommandUnknownOpts, argv: readonly string[]): string | undefined {
  // root options that take a value (so the word after them is not the command)
  const valued = new Set(program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.short, o.long]));
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') return undefined;
    if (!word.startsWith('-')) return GROUPS.some((g) => g.names.includes(word)) ? word : undefined;
    if (valued.has(word)) i++;
  }
  return undefined;
}

/** `crm contacts list`: the words that name a command. */
export function commandPath(cmd: CommandUnknownOpts): string {
  const names: string[] = [];
  for (let c: CommandUnknownOpts | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The deepest command below `cmd` that the words name (`contacts list -o yaml` → contacts list). */
export function namedBy(cmd: CommandUnknownOpts, words: readonly string[]): CommandUnknownOpts {
  let at = cmd;
  for (const word of words) at = at.commands.find((c) => c.name() === word || c.aliases().includes(word)) ?? at;
  return at;
}

export function allCommands(cmd: CommandUnknownOpts): CommandUnknownOpts[] {
  return [cmd, ...cmd.commands.flatMap((c) => allCommands(c))];
}

function globalOptions(
  o: ReturnType<ReturnType<typeof rootCommand>['opts']>,
  env: RunState['env'],
  io: RunState['io'],
): GlobalOptions {
  const { timeout, wide, quiet, verbose, color, ...rest } = o;
  // colors only on a terminal (each stream its own), never with --no-color or NO_COLOR (https://no-color.org)
  const useColor = color && (env.NO_COLOR ?? '') === '';
  return {
    ...rest,
    wide: Boolean(wide),
    color: useColor && Boolean(io.stdout.isTTY),
    stderrColor: useColor && Boolean(io.stderr.isTTY),
    quiet: Boolean(quiet),
    verbose: Boolean(verbose),
    timeoutMs: Math.round(timeout * 1000),
  };
}

/** `--fields a,b.c`: at least one field name. */
function fieldList(value: string): string[] {
  const fields = value.split(',').flatMap((f) => f.trim() || []);
  if (fields.length === 0)
    throw new InvalidArgumentError('expected one or more field names separated by commas, e.g. id,email');
  return fields;
}

const ROOT_HELP = `
Examples:
  $ crm sandbox --seed 42                    # a local API to try everything on
  $ crm keys add work --base-url https://crm.example.com/api/v2 < key.txt
  $ crm contacts list --all -o ndjson | jq .email
  $ crm batch contacts people.csv --rejects bad.csv
  $ crm recordings download --dir transcripts

Exit codes: 0 ok, 2 usage, 3 auth, 4 forbidden, 5 not found, 6 validation,
7 rate limited, 8 server/network, 9 partial failure, 130 interrupted.

Environment: CRM_PROFILE, CRM_API_KEY, CRM_V1_API_KEY, CRM_BASE_URL,
CRM_V1_BASE_URL, CRM_AUTH_HEADER, CRM_CONFIG_DIR; CRM_RATE_LIMIT_BUDGET (s a
request may wait out 429s, default 600); HTTPS_PROXY, NO_PROXY; NO_COLOR.
Responses over 64 MiB are refused (exit 8).`;
