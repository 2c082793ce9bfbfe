// `crm completion SHELL` and the hidden `crm __complete profiles` the scripts call on TAB. The
// script generator (completion.ts) loads only when a script is asked for.
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { examples, type Registry } from '../commands/shared/define.js';

export function registerCompletion(program: CommandUnknownOpts, reg: Registry): void {
  const completion = program
    .command('completion')
    .description('print a shell completion script')
    .argument('<shell>', 'bash, zsh or fish');
  examples(completion, [
    'source <(crm completion bash)       # in ~/.bashrc',
    'crm completion zsh > ~/.zfunc/_crm   # fpath=(~/.zfunc $fpath) in ~/.zshrc',
    'crm completion fish > ~/.config/fish/completions/crm.fish',
  ]);
  completion.action(async (shell) => {
    const { completionScript } = await import('./completion-shells.js');
    reg.state.io.stdout.write(completionScript(program, shell));
  });

  const complete = program
    .command('__complete', { hidden: true })
    .description('print words for the shell completion scripts')
    .argument('<what>', 'profiles');
  examples(complete, ['crm __complete profiles']);
  complete.action(async (what) => {
    const { profileNamesQuick } = await import('../config/profile-names.js');
    const words = what === 'profiles' ? profileNamesQuick(reg.state.env) : [];
    reg.state.io.stdout.write(words.map((w) => `${w}\n`).join(''));
  });
}
