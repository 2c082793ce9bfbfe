// End to end: the package as a user installs it. A clean clone of this repository at HEAD (so only
// committed files count), `npm ci`, `npm pack`, then `npm install -g` of the tarball into an empty
// prefix, offline, and the installed `crm` run from there. Slow (a whole `npm ci`), hence its own
// file and timeouts; the npm cache is warm from the repository's own `npm ci`.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, collect } from '../helpers/run-crm.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SLOW = 600_000;

let tmp: string;
let tarball: string;
let prefix: string;
let tarFiles: string[];

/**
 * The environment for the spawned npm and git: no npm_* variables inherited from `npm test`
 * (npm_config_local_prefix would point the inner npm at this repository).
 */
function toolEnv(): Record<string, string> {
  const env = cleanEnv({ npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' });
  for (const k of Object.keys(env))
    if (/^npm_/i.test(k) && !/^npm_config_(update_notifier|fund|audit)$/.test(k)) delete env[k];
  return env;
}

function run(cmd: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env: toolEnv(), maxBuffer: 64 << 20, timeout: SLOW }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * `crm` found on PATH in the prefix, as a user runs it. The directory of the Node running the
 * tests comes next, so the shim's `#!/usr/bin/env node` runs on that Node (CI's second run is 24).
 */
function crmEnv(): Record<string, string> {
  const env = toolEnv();
  env.PATH = [join(prefix, 'bin'), dirname(process.execPath), env.PATH].join(delimiter);
  env.CRM_CONFIG_DIR = join(tmp, 'config');
  return env;
}

function startInstalled(args: string[], env: Record<string, string> = {}) {
  return spawn('crm', args, { cwd: tmp, env: { ...crmEnv(), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
}

const runInstalled = (args: string[], env: Record<string, string> = {}) => collect(startInstalled(args, env));

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'crm-pack-'));
  const clone = join(tmp, 'clone');
  await run('git', ['clone', '--quiet', REPO, clone], tmp);
  await run('npm', ['ci', '--prefer-offline'], clone);
  const packDir = join(tmp, 'pack');
  mkdirSync(packDir);
  await run('npm', ['pack', '--pack-destination', packDir], clone);
  const [name] = readdirSync(packDir);
  tarball = join(packDir, name!);
  tarFiles = (await run('tar', ['-tzf', tarball], tmp)).split('\n').filter(Boolean);
  prefix = join(tmp, 'prefix');
  // --offline: the package must install from the tarball alone, with no registry.
  await run('npm', ['install', '--global', '--offline', '--prefix', prefix, tarball], tmp);
}, SLOW);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the packed tarball, installed', () => {
  it('holds the built bundle, its licences and the LICENSE, and no source maps or sources', () => {
    expect(tarFiles).toContain('package/bin/crm');
    expect(tarFiles).toContain('package/dist/cli/main.js');
    expect(tarFiles).toContain('package/dist/cli/root-help.js');
    expect(tarFiles).toContain('package/dist/cli/root-help.json');
    expect(tarFiles).toContain('package/dist/THIRD_PARTY_LICENSES.txt');
    expect(tarFiles).toContain('package/LICENSE');
    expect(tarFiles.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(tarFiles.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/'))).toEqual([]);
  });

  it('installs no dependencies: the bundle holds every library it runs, with their licences', () => {
    const installed = join(prefix, 'lib', 'node_modules', 'crm-cli');
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { dependencies?: object };
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(existsSync(join(installed, 'node_modules'))).toBe(false);
    const licences = readFileSync(join(installed, 'dist', 'THIRD_PARTY_LICENSES.txt'), 'utf8');
    for (const lib of ['commander', 'undici', 'zod', 'conf', 'ora', 'cli-table3', 'csv-parse']) {
      expect(licences).toMatch(new RegExp(`^  ${lib}@\\d`, 'm'));
    }
  });

  it('crm --version prints the package version', async () => {
    const r = await runInstalled(['--version']);
    expect(r.code, r.stderr).toBe(0);
    const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect(r.stdout).toBe(`${version}\n`);
    // …on the Node running these tests (the shim's `env node` finds it first on PATH).
    const node = await collect(
      spawn('node', ['-p', 'process.version'], { env: crmEnv(), stdio: ['pipe', 'pipe', 'pipe'] }),
    );
    expect(node.stdout.trim()).toBe(process.version);
  });

  it('crm --help (printed by bin/crm from dist/cli/root-help.json) lists the groups', async () => {
    const r = await runInstalled(['--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: crm \[options\] \[command\]\n/);
    expect(r.stdout).toContain('contacts [verb]');
    expect(r.stdout).toContain('Exit codes:');
  });

  it('crm contacts --help shows the verbs', async () => {
    const r = await runInstalled(['contacts', '--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Usage: crm contacts/);
    for (const verb of ['list', 'get', 'create', 'update', 'delete']) expect(r.stdout).toContain(verb);
  });

  it('crm sandbox starts, and the installed crm lists its contacts', async () => {
    const sandbox = startInstalled(['sandbox', '--port', '0', '--seed', '3']);
    const exited = new Promise((done) => sandbox.once('exit', done));
    try {
      let stderr = '';
      sandbox.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const first = await new Promise<string>((resolve, reject) => {
        createInterface({ input: sandbox.stdout }).once('line', resolve);
        sandbox.once('exit', (code) => reject(new Error(`sandbox exited with ${code}: ${stderr}`)));
      });
      const info = JSON.parse(first) as { base_url: string; keys: { admin: string } };
      expect(info.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v2$/);
      // A request command loads the bundle's lazy chunks (undici, zod, the output code).
      const list = await runInstalled(['-o', 'json', 'contacts', 'list', '--limit', '2'], {
        CRM_BASE_URL: info.base_url,
        CRM_API_KEY: info.keys.admin,
      });
      expect(list.code, list.stderr).toBe(0);
      expect((JSON.parse(list.stdout) as unknown[]).length).toBe(2);
    } finally {
      sandbox.kill('SIGTERM');
      await exited;
    }
  });
});
