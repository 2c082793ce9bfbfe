// The completion model, read from the command tree (so a script never lists a command that does not
// exist): commands, flags, and what each flag value and argument is. completion-shells.ts writes it out.
import type { Argument, CommandUnknownOpts as Command, Option } from '@commander-js/extra-typings';
import { DEAL_CONTACT_TYPES, RESOURCES } from '../api/resources.js';
import { linkPairs } from '../api/links.js';
import { METHODS } from '../commands/api/run.js';

/** A flag's value or an argument: fixed words, a file, a folder, a profile name, a body (`@file`), free text. */
export type Kind = readonly string[] | 'file' | 'dir' | 'profile' | 'data' | 'none';

/** `value` undefined: the flag takes none. */
export type Flag = { names: string[]; description: string; value?: Kind };
/** `flags`: the command's own (the root's are global); `args`: one per positional argument. */
type Node = { path: string; subcommands: Array<{ name: string; description: string }>; flags: Flag[]; args: Kind[] };
/** `globals`: the root's flags but --help/--version; `valued`: every flag taking a value, by name. */
export type Model = { nodes: Node[]; globals: Flag[]; valued: Map<string, Kind> };

export const SHELLS = ['bash', 'zsh', 'fish'] as const;

export function buildModel(program: Command): Model {
  const nodes = collect(program, 'crm');
  const rootOnly = new Set(['--help', '-h', '--version', '-V']);
  const globals = nodes[0]!.flags.filter((f) => !f.names.some((n) => rootOnly.has(n)));
  const globalNames = new Set(globals.flatMap((f) => f.names));
  // a command's copy of a global flag (keys add --base-url) is listed once, as the global
  for (const n of nodes.slice(1)) n.flags = n.flags.filter((f) => !f.names.some((name) => globalNames.has(name)));
  // the scripts look a flag up by name alone, so a name must mean the same on every command
  const meaning = new Map<string, string>();
  const valued = new Map<string, Kind>();
  for (const flag of nodes.flatMap((n) => n.flags)) {
    for (const name of flag.names) {
      const m = JSON.stringify(flag.value ?? null);
      if ((meaning.get(name) ?? m) !== m)
        throw new Error(`completion: ${name} means different things on different commands`);
      meaning.set(name, m);
      if (flag.value !== undefined) valued.set(name, flag.value);
    }
  }
  return { nodes, globals, valued };
}

function collect(cmd: Command, path: string): Node[] {
  const help = cmd.createHelp();
  const subs = help.visibleCommands(cmd).filter((c) => c.name() !== 'help');
  const node: Node = {
    path,
    subcommands: subs.map((c) => ({ name: c.name(), description: c.description() })),
    flags: help.visibleOptions(cmd).map((o) => ({
      names: [o.long, o.short].filter((f): f is string => Boolean(f)),
      description: o.description,
      value: o.required || o.optional ? optionKind(o) : undefined,
    })),
    args: cmd.registeredArguments.map((a) => argumentKind(path, a)),
  };
  return [node, ...subs.flatMap((c) => collect(c, `${path} ${c.name()}`))];
}

/** By the value's name in the flag's usage, e.g. `--out <file>`. */
const PLACEHOLDERS: Record<string, Kind> = { file: 'file', dir: 'dir', json: 'data' };

function optionKind(o: Option): Kind {
  if (o.argChoices) return o.argChoices;
  if (o.long === '--type') return DEAL_CONTACT_TYPES; // not a commander choice: the server checks it
  if (o.long === '--profile') return 'profile';
  const placeholder = /[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1] ?? '';
  return PLACEHOLDERS[placeholder] ?? 'none';
}

function argumentKind(path: string, a: Argument): Kind {
  if (a.argChoices) return a.argChoices;
  const meetingLinks = /^crm links (get|set|clear)$/.test(path);
  const unique = (words: string[]): string[] => [...new Set(words)];
  switch (a.name()) {
    case 'file':
      return 'file';
    case 'profile':
      return path === 'crm keys add' ? 'none' : 'profile'; // add names a new profile
    case 'shell':
      return SHELLS;
    case 'method':
      return METHODS;
    case 'resource':
      return path === 'crm batch' ? RESOURCES.filter((r) => r.batch).map((r) => r.name) : RESOURCES.map((r) => r.name);
    case 'parent':
    case 'relation': {
      // `links import` takes both: the link pairs and the meeting associations
      const parent = a.name() === 'parent';
      const meetings = parent
        ? RESOURCES.filter((r) => r.associations).map((r) => r.name)
        : RESOURCES.flatMap((r) => r.associations ?? []).map((x) => x.name);
      const links = linkPairs().map((p) => (parent ? p.parent.name : p.link.relation));
      return unique(meetingLinks ? meetings : path === 'crm links import' ? [...links, ...meetings] : links);
    }
    default:
      return 'none';
  }
}
