// Build time only (scripts/build.mjs): the root help with its width-dependent parts as placeholders,
// for bin/crm to answer `crm --help` without the command tree (root-help.ts).
import { buildProgram } from './program.js';
import type { HelpPart, HelpTemplate } from './root-help.js';

export function rootHelpTemplate(): HelpTemplate {
  let text = '';
  const parts: HelpPart[] = [];
  const placeholder = (part: HelpPart) => `\0${parts.push(part) - 1}\0`;
  const write = (s: string) => {
    text += s;
    return true;
  };
  const io = { stdin: process.stdin, stdout: { write }, stderr: { write } } as never;
  const program = buildProgram({
    io,
    env: {},
    signal: new AbortController().signal,
    jsonErrors: false,
    verbose: false,
  });
  const settings = program.configureHelp();
  program.configureHelp({
    ...settings,
    formatItem: (term: string, termWidth: number, description: string) =>
      placeholder({ item: [term, termWidth, description] }),
    boxWrap: (str: string) => placeholder({ wrap: str }),
  });
  program.outputHelp();
  return { text, parts, minWidthToWrap: settings.minWidthToWrap ?? 40 };
}
