// Builds the commander program: global options (CONTRACT §3) and every command group. Each
// command's action loads its module lazily, so nothing heavy is imported to print help.
import { Command, Help, InvalidArgumentError, Option } from 'commander';
import type { Ctx, GlobalOptions, IO, OutputFormat } from '../commands/context.js';
import { OUTPUT_FORMATS } from '../commands/context.js';
import { VERSION } from '../version.js';
import { RESOURCE_NAMES } from '../api/resources.js';
import { numeric, RANGES } from './numeric.js';
import { createContext } from './context.js';
import { registerResources } from './register-resources.js';
import { registerLinks } from './register-links.js';
import { registerBatch } from './register-batch.js';
import { registerRecordings } from './register-recordings.js';
import { registerV1 } from './register-v1.js';
import { registerKeys } from './register-keys.js';
import { registerMisc } from './register-misc.js';

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

export type CommandFn<O> = (opts: O, ctx: Ctx) => Promise<void>;

export function buildProgram(state: RunState, argv?: readonly string[]): Command {
  const program = new Command('crm')
    .description('Operate the CRM service from the command line: records, links, bulk imports, transcripts.')
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .addOption(new Option('--profile <name>', 'use this saved profile (see crm keys list)'))
    .addOption(new Option('--base-url <url>', 'version 2 API root, ending in /api/v2'))
    .addOption(new Option('--v1-base-url <url>', 'version 1 API root (default: --base-url with /api/v1)'))
    .addOption(new Option('-o, --output <format>', 'output format (default: table on a terminal, json otherwise)').choices(OUTPUT_FORMATS))
    .addOption(new Option('--fields <list>', 'comma-separated fields to print, e.g. id,email,owner_id').argParser(fieldList))
    .addOption(new Option('--wide', 'tables: every column, uncut, even wider than the terminal'))
    .addOption(new Option('--no-color', 'no colors (also NO_COLOR)'))
    .addOption(new Option('-q, --quiet', 'no progress, notices or warnings'))
    .addOption(new Option('-v, --verbose', 'log each request on stderr (method, URL, status, ms, retries; keys masked)'))
    .addOption(
      new Option('--timeout <seconds>', 'limit for each whole response, headers and body').default(30).argParser(numeric(RANGES.timeoutSeconds)),
    )
    .addOption(
      new Option('--max-retries <n>', 'retries on 5xx and network errors (a 429 with Retry-After waits within a 10-minute budget)')
        .default(5)
        .argParser(numeric(RANGES.maxRetries)),
    )
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => state.io.stdout.write(s),
      writeErr: (s) => state.io.stderr.write(s),
    })
    .addHelpText(
      'after',
      `
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
Responses over 64 MiB are refused (exit 8).`,
    );

  program.hook('preAction', (_root, action) => {
    const opts = action.optsWithGlobals();
    state.jsonErrors = opts.output === 'json';
    state.verbose = Boolean(opts.verbose);
  });

  const ctx = (cmd: Command): Ctx => createContext(state, globalOptions(cmd, state.env, Boolean(state.io.stdout.isTTY)));
  const api = { state, ctx };
  // Only the invoked group is built when argv names one (start-up: the whole tree costs ~20 ms);
  // help, completion and anything unknown (for suggestions) get the whole tree.
  const only = argv === undefined ? undefined : invokedGroup(argv);
  const want = (name: string) => only === undefined || only === name;
  registerResources(program, api, want);
  if (want('recordings')) registerRecordings(program, api);
  if (want('links')) registerLinks(program, api);
  if (want('batch')) registerBatch(program, api);
  if (want('v1')) registerV1(program, api);
  if (want('keys') || want('keys-check')) registerKeys(program, api);
  if (want('api') || want('completion') || want('sandbox') || want('__complete')) registerMisc(program, api);
  for (const sub of program.commands) sub.helpGroup(GROUPS[sub.name()] ?? 'Setup:');
  // help: grouped as in the root listing; each command's help also lists the global options
  program.commandsGroup('Setup:').helpCommand(true);
  // Every command inherits the root's error handling and output routing.
  for (const cmd of allCommands(program)) {
    cmd.configureHelp(HELP);
    // commander's own errors are not printed by commander: main prints them as crm prints every
    // error (`Error: …` and a `Hint:` naming this command's --help), exit 2
    const outputError = (): void => {
      state.usageOf = commandPath(cmd);
    };
    cmd
      .exitOverride()
      .configureOutput({ ...program.configureOutput(), outputError })
      .showSuggestionAfterError(true);
    // a verb takes exactly its arguments: `crm contacts get a b` is a usage error, not a silent drop
    if (cmd.commands.length === 0) cmd.allowExcessArguments(false);
  }
  return program;
}

/** `crm --help` lists the commands by what they are for, as gh does; anything else is under Setup. */
const GROUPS: Record<string, string> = {
  ...Object.fromEntries(RESOURCE_NAMES.map((r) => [r, 'Records:'])),
  links: 'Links and bulk:',
  batch: 'Links and bulk:',
  api: 'Links and bulk:',
  v1: 'Version 1 (deprecated):',
};

/**
 * Every command's help ends with the global options it accepts (as gh's INHERITED FLAGS), but not
 * --version, which only `crm --version` takes.
 */
const HELP = {
  showGlobalOptions: true,
  visibleGlobalOptions(this: Help, cmd: Command) {
    return Help.prototype.visibleGlobalOptions.call(this, cmd).filter((o) => o.long !== '--version');
  },
};

const TOP_LEVEL = new Set<string>([...RESOURCE_NAMES, 'links', 'batch', 'v1', 'keys', 'keys-check', 'api', 'sandbox', '__complete']);
/** root options that take a value (so the word after them is not the command) */
const VALUED = new Set(['--profile', '--base-url', '--v1-base-url', '-o', '--output', '--fields', '--timeout', '--max-retries']);

/** The top-level command argv invokes, when it is one whose subtree can be built alone. */
export function invokedGroup(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') return undefined;
    if (word.startsWith('-')) {
      if (VALUED.has(word)) i++;
      continue;
    }
    return TOP_LEVEL.has(word) ? word : undefined;
  }
  return undefined;
}

export interface Registry {
  state: RunState;
  ctx(cmd: Command): Ctx;
}

/** Wraps a lazily loaded command function as a commander action. */
export function action<O>(
  reg: Registry,
  load: () => Promise<CommandFn<O>>,
  toOpts: (args: string[], opts: Record<string, unknown>, cmd: Command) => O,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const positional = cmd.processedArgs as string[];
    const opts = toOpts(positional, cmd.opts(), cmd);
    const fn = await load();
    await fn(opts, reg.ctx(cmd));
  };
}

/** Appends an Examples section to a command's help. */
export function examples(cmd: Command, lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}

/** `crm contacts list`: the words that name a command. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

export function allCommands(cmd: Command): Command[] {
  return [cmd, ...cmd.commands.flatMap((c) => allCommands(c))];
}

function globalOptions(cmd: Command, env: Record<string, string | undefined>, tty: boolean): GlobalOptions {
  const o = cmd.optsWithGlobals();
  const fields = o.fields as string[] | undefined;
  return {
    profile: o.profile as string | undefined,
    baseUrl: o.baseUrl as string | undefined,
    v1BaseUrl: o.v1BaseUrl as string | undefined,
    output: o.output as OutputFormat | undefined,
    fields,
    wide: Boolean(o.wide),
    // colors only on a terminal, never with --no-color or NO_COLOR (https://no-color.org)
    color: tty && o.color !== false && (env.NO_COLOR ?? '') === '',
    quiet: Boolean(o.quiet),
    verbose: Boolean(o.verbose),
    timeoutMs: Math.round(Number(o.timeout) * 1000),
    maxRetries: Number(o.maxRetries),
  };
}

/** `--fields a,b.c`: at least one field name. */
export function fieldList(value: string): string[] {
  const fields = value
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  if (fields.length === 0) throw new InvalidArgumentError('expected one or more field names separated by commas, e.g. id,email');
  return fields;
}

/** Collects a repeatable option (`--set a=1 --set b=2`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
