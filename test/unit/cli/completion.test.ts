import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { completionScript } from '../../../src/cli/completion.js';
import { buildProgram } from '../../../src/cli/program.js';
import { fakeIO } from './fake-io.js';

const program = () =>
  buildProgram({ io: fakeIO().io, env: {}, signal: new AbortController().signal, jsonErrors: false, verbose: false });
const FILES = { bash: 'crm.bash', zsh: '_crm', fish: 'crm.fish' } as const;

describe('completion scripts', () => {
  it.each(Object.entries(FILES))('completions/%s is in sync with the command tree (npm run completions)', (shell, file) => {
    const checkedIn = readFileSync(new URL(`../../../completions/${file}`, import.meta.url), 'utf8');
    expect(checkedIn).toBe(completionScript(program(), shell));
  });

  it('an unknown shell is a usage error', () => {
    expect(() => completionScript(program(), 'tcsh')).toThrow(/bash, zsh, fish/);
  });

  const complete = (words: string[]): string[] => {
    const script = completionScript(program(), 'bash');
    const arr = words.map((w) => `'${w}'`).join(' ');
    const out = execFileSync('bash', ['-c', `${script}\nCOMP_WORDS=(${arr}); COMP_CWORD=${words.length - 1}; _crm; printf '%s\\n' "\${COMPREPLY[@]}"`], {
      encoding: 'utf8',
    });
    return out.split('\n').filter(Boolean);
  };

  it('bash completes groups, verbs, options and link parents', () => {
    expect(complete(['crm', 'con'])).toEqual(['contacts']);
    expect(complete(['crm', 'contacts', ''])).toEqual(expect.arrayContaining(['list', 'get', 'create', 'update', 'delete']));
    expect(complete(['crm', 'recordings', ''])).toEqual(expect.arrayContaining(['list', 'get', 'transcript', 'download']));
    expect(complete(['crm', 'recordings', ''])).not.toContain('delete');
    expect(complete(['crm', 'contacts', 'list', '--al'])).toEqual(['--all']);
    expect(complete(['crm', '--profile', 'x', 'batch', 'con'])).toEqual(['contacts']);
    expect(complete(['crm', 'links', 'add', ''])).toEqual(expect.arrayContaining(['deals', 'notes', 'segments']));
  });
});
