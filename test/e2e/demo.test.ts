// `npm run demo` (issue 17): the demo echoed `crm deals create --set name=Demo renewal …`, which a
// shell splits into one word too many. The demo now runs each command as the shell line it prints;
// this test runs the demo, then pastes every line it echoed into sh once more, against a server
// where nothing listens: each line must get past crm's parsing (no usage error, exit 2).
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { crmOnPath, cleanEnv, collect } from '../helpers/run-crm.js';

const DEMO = fileURLToPath(new URL('../../scripts/demo.mjs', import.meta.url));
let dir: string;
let binDir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-demo-test-'));
  binDir = crmOnPath(dir);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function sh(line: string, input: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const env = cleanEnv({
      CRM_CONFIG_DIR: join(dir, 'config'),
      CRM_BASE_URL: 'http://127.0.0.1:9/api/v2',
      CRM_V1_BASE_URL: 'http://127.0.0.1:9/api/v1',
      CRM_API_KEY: `service_live_${'d'.repeat(40)}`,
      CRM_V1_API_KEY: `service_pk_${'d'.repeat(40)}`,
      CRM_MAX_RETRIES: '0',
      PATH: `${binDir}:${process.env.PATH}`,
    });
    const child = execFile('sh', ['-c', line], { cwd: dir, env }, (err, _stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
    child.stdin!.end(input);
  });
}

it(
  'the demo runs to the end, and every command it echoes parses when pasted into a shell',
  { timeout: 120_000 },
  async () => {
    const demo = await collect(
      spawn(process.execPath, [DEMO], { env: cleanEnv({ TMPDIR: dir }), stdio: ['pipe', 'pipe', 'pipe'] }),
      {
        timeoutMs: 110_000,
      },
    );
    expect(demo.code, demo.stderr).toBe(0);
    const lines = demo.stdout
      .split('\n')
      .filter((l) => l.startsWith('$ crm '))
      .map((l) => l.slice(2));
    expect(lines.length, demo.stdout).toBeGreaterThanOrEqual(12);
    // every command shows what it printed: the deal it creates too (trial: nothing under it)
    const afterDeal = demo.stdout.split(/\$ crm deals create[^\n]*\n/)[1] ?? '';
    expect(afterDeal.split('\n$ ')[0]).toMatch(/"name": ?"Demo renewal"/);
    // what to try next on a line of its own (trial: cut at 80 columns after the files' folder)
    expect(demo.stdout).toMatch(/\nTry it yourself: npm run sandbox\n/);
    for (const line of lines) {
      const key = line.includes('--v1') ? `service_pk_${'d'.repeat(40)}` : `service_live_${'d'.repeat(40)}`;
      const r = await sh(line, `${key}\n`);
      expect(r.code, `${line}\n${r.stderr}`).not.toBe(2);
    }
  },
);
