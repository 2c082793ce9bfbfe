// The README's commands run as written. Every ```sh block of README.md is run with bash (-e, -o
// pipefail: a failing line fails the block), one after the other, in a throw-away HOME and a
// throw-away folder, with `crm` on PATH (a wrapper for this repository's bin/crm), and must exit 0.
//
// A block that must not run here is marked by an HTML comment on the line before its fence:
//   <!-- not run: REASON -->
// e.g. `npm ci`/`npm test` of the repository itself (.ci/run runs those), `npm link` or a global
// install (they change the machine); each must give its reason.
//
// The README's "try it by hand" runs in the repository's folder and reads examples/; the test copies
// examples/ into its folder instead, so nothing is written into the repository.
//
// docs/*.md and src/*/README.md: their sh blocks run the same way, with the same marker.
//
// Also: every link of README.md and docs/*.md stays inside the repository (a fresh clone has no
// ../shared).
import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CRM_BIN, cleanEnv } from '../helpers/run-crm.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = join(ROOT, 'README.md');

interface Block {
  /** 1-based line of the opening fence */
  line: number;
  code: string;
  /** the reason given in `<!-- not run: … -->`, when the block is not run */
  notRun?: string;
}

/** The fenced blocks of a Markdown text, with their language and the comment line before them. */
export function fencedBlocks(markdown: string): Array<Block & { lang: string }> {
  const lines = markdown.split('\n');
  const blocks: Array<Block & { lang: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trim().startsWith(fence)) body.push(lines[j++]!);
    let k = i - 1;
    while (k >= 0 && lines[k]!.trim() === '') k--;
    const marker = k >= 0 ? /^<!--\s*not run:\s*(.*?)\s*-->$/.exec(lines[k]!.trim()) : null;
    blocks.push({ line: i + 1, lang: open[3]!, code: body.join('\n'), notRun: marker?.[1] });
    i = j;
  }
  return blocks;
}

const blocks = fencedBlocks(readFileSync(README, 'utf8'));
const shBlocks = blocks.filter((b) => b.lang === 'sh');

const temp = mkdtempSync(join(tmpdir(), 'crm-readme-'));
const home = join(temp, 'home');
const work = join(temp, 'work');
const bin = join(temp, 'bin');
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function setUp(): Record<string, string> {
  for (const dir of [home, work, bin]) mkdirSync(dir, { recursive: true });
  const crm = join(bin, 'crm');
  writeFileSync(crm, `#!/bin/sh\nexec '${process.execPath}' '${CRM_BIN}' "$@"\n`);
  chmodSync(crm, 0o755);
  cpSync(join(ROOT, 'examples'), join(work, 'examples'), { recursive: true });
  const env = cleanEnv({
    HOME: home,
    PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    // the config, data and cache folders follow HOME
    XDG_CONFIG_HOME: undefined,
    XDG_DATA_HOME: undefined,
    XDG_CACHE_HOME: undefined,
  });
  return env;
}

let env: Record<string, string> | undefined;

/** Runs one block; then ends whatever it left running (its process group: a sandbox if it failed). */
function runBlock(code: string, timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  env ??= setUp();
  return new Promise((done, fail) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', code], {
      cwd: work,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const killGroup = (): void => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    };
    const timer = setTimeout(() => {
      killGroup();
      fail(new Error(`block timed out after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', fail);
    child.on('close', (exit) => {
      clearTimeout(timer);
      killGroup();
      done({ code: exit, stdout, stderr });
    });
  });
}

describe('README.md: every sh block runs as written', () => {
  it('has sh blocks to run, and no shell block under another name that would escape the test', () => {
    expect(shBlocks.filter((b) => b.notRun === undefined).length).toBeGreaterThanOrEqual(2);
    // a block left out must say why (install steps that change the machine, the demo CI runs anyway)
    for (const b of shBlocks) if (b.notRun !== undefined) expect(b.notRun.trim(), `README.md:${b.line}`).not.toBe('');
    expect(blocks.filter((b) => ['bash', 'shell', 'console', 'zsh'].includes(b.lang))).toEqual([]);
  });

  for (const block of shBlocks) {
    const first = block.code.split('\n')[0]!.slice(0, 60);
    if (block.notRun !== undefined) continue; // marked "not run" with its reason (checked above)
    it(`line ${block.line}: ${first}`, async () => {
      const r = await runBlock(block.code);
      expect(r.code, `block at README.md:${block.line} failed\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(
        0,
      );
    }, 90_000);
  }

  it('the try-by-hand block left what it says: a profile, the imported contacts, the transcripts', () => {
    const tryBlock = shBlocks.find((b) => b.code.includes('crm sandbox'));
    expect(tryBlock?.notRun).toBeUndefined();
    expect(existsSync(join(home, '.config', 'crm-cli-nodejs', 'config.json'))).toBe(true);
    expect(readdirSync(join(work, 'transcripts')).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
  });

  it('marks blocks only with a reason', () => {
    for (const b of shBlocks)
      if (b.notRun !== undefined) expect(b.notRun.length, `README.md:${b.line}`).toBeGreaterThan(10);
  });
});

// The same for the other documents that show commands: every ```sh block of docs/*.md and of
// src/*/README.md runs (or carries `<!-- not run: REASON -->`), and a block of another language, or
// of none, that starts with a command (`crm …`, `$ crm …`, `npm …`) must be one of them.
const DOCS = [
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
  ...readdirSync(join(ROOT, 'src'))
    .filter((d) => existsSync(join(ROOT, 'src', d, 'README.md')))
    .map((d) => join('src', d, 'README.md')),
];
describe.each(DOCS)('%s: every command block runs as written', (doc) => {
  const all = fencedBlocks(readFileSync(join(ROOT, doc), 'utf8'));
  it('shows commands only in sh blocks, or marks them not run with a reason', () => {
    for (const b of all) {
      if (b.notRun !== undefined) expect(b.notRun.length, `${doc}:${b.line}`).toBeGreaterThan(10);
      else if (b.lang !== 'sh')
        expect(b.code.trimStart(), `${doc}:${b.line} shows a command outside a sh block`).not.toMatch(
          /^(\$ )?(crm|npm|node|npx) /,
        );
    }
  });
  for (const block of all.filter((b) => b.lang === 'sh' && b.notRun === undefined)) {
    it(`line ${block.line}: ${block.code.split('\n')[0]!.slice(0, 60)}`, async () => {
      const r = await runBlock(block.code);
      expect(r.code, `block at ${doc}:${block.line} failed\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(0);
    }, 90_000);
  }
});

describe('the documentation stays inside the repository', () => {
  const docs = [
    README,
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(ROOT, 'docs', f)),
  ];
  it.each(docs.map((f) => [relative(ROOT, f), f]))('%s links only to files in the repository', (_, file) => {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1]!)
      .filter((t) => !/^(https?:|mailto:|#)/.test(t));
    for (const target of targets) {
      const path = resolve(dirname(file), target.split('#')[0]!);
      expect(relative(ROOT, path).startsWith('..'), `${target} in ${relative(ROOT, file)} leaves the repository`).toBe(
        false,
      );
      expect(existsSync(path), `${target} in ${relative(ROOT, file)} does not exist`).toBe(true);
    }
    // a path written as code, not as a link, counts too (the README once pointed at ../shared/CONTRACT.md)
    expect(text).not.toMatch(/\.\.\/shared\//);
  });
});
