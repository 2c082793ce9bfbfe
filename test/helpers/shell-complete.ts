// Asks the real bash, zsh and fish what TAB offers after a command line, with crm's completion
// installed the way the README says (bash-completion's user folder, a folder in zsh's fpath,
// fish's completions folder). `crm` on the PATH is the built bin/crm run by this Node.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRM_BIN, cleanEnv } from './run-crm.js';

export type Shell = 'bash' | 'zsh' | 'fish';
export const BASH_COMPLETION = '/usr/share/bash-completion/bash_completion';
const ZSH_CAPTURE = fileURLToPath(new URL('./zsh-capture/capture.zsh', import.meta.url));

/** Whether `shell` (and, for bash, the bash-completion package) can be run here. */
export function shellAvailable(shell: Shell): boolean {
  const found = spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
  return shell === 'bash' ? found && spawnSync('test', ['-f', BASH_COMPLETION]).status === 0 : found;
}

export interface ShellHome {
  /** a home folder holding crm's completion for each shell and a `crm` on PATH */
  home: string;
  env: Record<string, string>;
}

/**
 * Installs `crm completion SHELL` output for all three shells under `home`, as the README says.
 * `crm` on PATH is a wrapper in `home/bin`, or the one already in `installed` (a folder).
 */
export function installCompletions(home: string, env: Record<string, string> = {}, installed?: string): ShellHome {
  const bin = installed ?? path.join(home, 'bin');
  if (installed === undefined) {
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, 'crm'), `#!/bin/sh\nexec '${process.execPath}' '${CRM_BIN}' "$@"\n`);
    chmodSync(path.join(bin, 'crm'), 0o755);
  }
  const fullEnv = cleanEnv({
    ...env,
    HOME: home,
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    // bin/crm starts with `#!/usr/bin/env node`: this Node
    PATH: `${bin}:${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    CAPTURE_FPATH: path.join(home, '.zfunc'),
  });
  const script = (shell: Shell) =>
    execFileSync(path.join(bin, 'crm'), ['completion', shell], { env: fullEnv, encoding: 'utf8' });
  const put = (file: string, text: string) => {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  put(path.join(home, '.local/share/bash-completion/completions/crm'), script('bash'));
  put(path.join(home, '.zfunc/_crm'), script('zsh'));
  put(path.join(home, '.config/fish/completions/crm.fish'), script('fish'));
  return { home, env: fullEnv };
}

/** bash splits words at spaces and at COMP_WORDBREAKS' `=`: `--output=j` is `--output`, `=`, `j`. */
function bashWords(line: string): string[] {
  return line.split(' ').flatMap((w) => {
    const i = w.indexOf('=');
    if (i <= 0) return [w];
    const after = w.slice(i + 1);
    return after === '' ? [w.slice(0, i), '='] : [w.slice(0, i), '=', after];
  });
}

export interface Completion {
  /** what each line offers, sorted and unique, as the shell would put it on the line */
  offers: string[][];
  stderr: string;
}

/**
 * What TAB offers at the end of each line, in `cwd`. `sourced`: loaded the README's other way,
 * `source <(crm completion SHELL)` (bash without bash-completion, zsh after compinit).
 */
export function completeIn(shell: Shell, lines: string[], sh: ShellHome, cwd: string, sourced = false): Completion {
  const env = sourced ? { ...sh.env, CAPTURE_SOURCE: 'source <(crm completion zsh)', CAPTURE_FPATH: '' } : sh.env;
  const run = (cmd: string, args: string[], input?: string) => {
    const r = spawnSync(cmd, args, { env, cwd, encoding: 'utf8', timeout: 60_000, input });
    if (r.error) throw r.error;
    return r;
  };
  let r: ReturnType<typeof run>;
  if (shell === 'bash') {
    // bash-completion loads the file from the user folder on first use (or the script is sourced);
    // then each line's words are completed by the function registered, as readline would call it
    const load = sourced
      ? 'source <(crm completion bash)'
      : `source ${BASH_COMPLETION}\n__load_completion crm || exit 3`;
    const program = `${load}
complete -p crm >/dev/null || exit 4
while IFS= read -r line; do
  read -r -a COMP_WORDS <<< "$line"
  [[ $line == *' ' ]] && COMP_WORDS+=('')
  COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
  COMP_LINE=$line COMP_POINT=\${#line}
  COMPREPLY=()
  _crm
  printf '%s\\n' "\${COMPREPLY[@]}" --END--
done`;
    const input = lines.map((l) => bashWords(l).join(' ') + (l.endsWith(' ') ? ' ' : '')).join('\n');
    r = run('bash', ['--norc', '--noprofile', '-c', program], `${input}\n`);
  } else if (shell === 'zsh') {
    r = run('zsh', ['-f', ZSH_CAPTURE, ...lines]);
  } else {
    // the completions folder is fish's own (autoloaded on first use of `crm`)
    r = run('fish', ['-c', 'for line in $argv; complete -C $line; echo --END--; end', ...lines]);
  }
  if (r.status !== 0) throw new Error(`${shell} exited ${r.status}: ${r.stderr}`);
  const blocks = r.stdout.split(/^--END--$/m).slice(0, lines.length);
  const offers = blocks.map((b) =>
    [
      ...new Set(
        b
          .split('\n')
          .filter(Boolean)
          .map((l) => normalise(shell, l)),
      ),
    ].sort(),
  );
  return { offers, stderr: r.stderr };
}

/** One offer without the shell's decoration: fish's tab and description, zsh's " -- display". */
function normalise(shell: Shell, line: string): string {
  let word = line;
  if (shell === 'fish') word = word.split('\t')[0]!;
  if (shell === 'zsh') word = word.split(' -- ')[0]!.replace(/\\(.)/g, '$1');
  // --flag=value: the value alone (bash completes the word after `=`); folders without their `/`
  return word.replace(/^--[a-z0-9-]+=/, '').replace(/\/$/, '');
}
