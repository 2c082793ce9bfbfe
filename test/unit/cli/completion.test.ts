import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from '@commander-js/extra-typings';
import { describe, expect, it } from 'vitest';
import { DEAL_CONTACT_TYPES, NOTE_RECORD_TYPES } from '../../../src/api/resources.js';
import { OUTPUT_FORMATS } from '../../../src/output/format.js';
import { buildModel } from '../../../src/cli/completion.js';
import { completionScript } from '../../../src/cli/completion-shells.js';
import { profileNamesQuick } from '../../../src/config/profile-names.js';
import { buildProgram } from '../../../src/cli/program.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { tempDir } from '../../helpers/temp.js';

const program = () =>
  buildProgram({ io: fakeIO().io, env: {}, signal: new AbortController().signal, jsonErrors: false, verbose: false });
const FILES = { bash: 'crm.bash', zsh: '_crm', fish: 'crm.fish' } as const;

describe('completion scripts', () => {
  it.each(Object.entries(FILES))(
    'completions/%s is in sync with the command tree (npm run completions)',
    (shell, file) => {
      const checkedIn = readFileSync(new URL(`../../../completions/${file}`, import.meta.url), 'utf8');
      expect(checkedIn).toBe(completionScript(program(), shell));
    },
  );

  it('an unknown shell is a usage error', () => {
    expect(() => completionScript(program(), 'tcsh')).toThrow(/bash, zsh, fish/);
  });

  const complete = (words: string[]): string[] => {
    const script = completionScript(program(), 'bash');
    const arr = words.map((w) => `'${w}'`).join(' ');
    const out = execFileSync(
      'bash',
      ['-c', `${script}\nCOMP_WORDS=(${arr}); COMP_CWORD=${words.length - 1}; _crm; printf '%s\\n' "\${COMPREPLY[@]}"`],
      {
        encoding: 'utf8',
      },
    );
    return out.split('\n').filter(Boolean);
  };

  it('bash completes groups, verbs, options and link parents', () => {
    expect(complete(['crm', 'con'])).toEqual(['contacts']);
    expect(complete(['crm', 'contacts', ''])).toEqual(
      expect.arrayContaining(['list', 'get', 'create', 'update', 'delete']),
    );
    expect(complete(['crm', 'recordings', ''])).toEqual(
      expect.arrayContaining(['list', 'get', 'transcript', 'download']),
    );
    expect(complete(['crm', 'recordings', ''])).not.toContain('delete');
    expect(complete(['crm', 'contacts', 'list', '--al'])).toEqual(['--all']);
    expect(complete(['crm', '--profile', 'x', 'batch', 'con'])).toEqual(['contacts']);
    expect(complete(['crm', 'links', 'add', ''])).toEqual(expect.arrayContaining(['deals', 'notes', 'segments']));
  });
});

describe('completion model', () => {
  const model = buildModel(program());

  it('knows what each flag value is: formats, roles, record types, profiles, files, folders, free text', () => {
    expect(model.valued.get('--output')).toEqual(OUTPUT_FORMATS);
    expect(model.valued.get('-o')).toEqual(OUTPUT_FORMATS);
    expect(model.valued.get('--type')).toEqual(DEAL_CONTACT_TYPES);
    expect(model.valued.get('--record-type')).toEqual(NOTE_RECORD_TYPES);
    expect(model.valued.get('--profile')).toBe('profile');
    for (const f of ['--out', '--rejects', '--results', '--data-file', '--keys'])
      expect(model.valued.get(f), f).toBe('file');
    expect(model.valued.get('--dir')).toBe('dir');
    expect(model.valued.get('--data')).toBe('data');
    expect(model.valued.get('--limit')).toBe('none');
    expect(model.valued.has('--all')).toBe(false);
  });

  it('knows what each argument is', () => {
    const args = (path: string) => model.nodes.find((n) => n.path === path)!.args;
    expect(args('crm batch')[1]).toBe('file');
    expect(args('crm keys use')).toEqual(['profile']);
    expect(args('crm keys remove')).toEqual(['profile']);
    expect(args('crm keys add')).toEqual(['none']);
  });

  it('leaves hidden commands out', () => {
    expect(model.nodes.flatMap((n) => n.subcommands.map((s) => s.name))).not.toContain('__complete');
    expect(model.nodes.map((n) => n.path)).not.toContain('crm __complete');
  });

  it('refuses a flag name that means different things on two commands (the scripts look flags up by name)', () => {
    const p = new Command('crm');
    p.command('a').option('--x <file>', 'a file');
    p.command('b').option('--x', 'a switch');
    expect(() => buildModel(p)).toThrow(/--x/);
  });
});

describe('profileNamesQuick', () => {
  const dirWith = (text?: string) => {
    const dir = tempDir('crm-names-');
    if (text !== undefined) writeFileSync(path.join(dir, 'config.json'), text);
    return { CRM_CONFIG_DIR: dir };
  };

  it('lists the names crm accepts, sorted, and nothing else from the file', () => {
    const profile = { base_url: 'http://x', api_key: 'service_live_SECRET' };
    const env = dirWith(
      JSON.stringify({ profiles: { work: profile, a: profile, 'bad\u001b[2J': profile, '-x': profile } }),
    );
    expect(profileNamesQuick(env)).toEqual(['a', 'work']);
  });

  it('is empty, without a word, when there is no config or it is not a config', () => {
    for (const text of [undefined, '', '{', '[]', '{"profiles":[1]}', '{"profiles":null}', 'null']) {
      expect(profileNamesQuick(dirWith(text)), String(text)).toEqual([]);
    }
  });
});
