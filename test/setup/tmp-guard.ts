// Each test file gets its own temporary folder (TMPDIR, so os.tmpdir() of the file and of every crm
// it spawns points into it), so what is left in it after the file's own afterAll hooks is that
// file's, whatever runs beside it (other files, another test run on the machine). A `crm-*` entry
// left there fails the file (a test, a helper or crm itself forgot to remove it); the folder is
// removed either way. Its name is short: tests at 80 columns print paths under it.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// the machine's temporary folder, kept for a later file in the same worker
const BASE = 'TESTS_BASE_TMPDIR';
process.env[BASE] ??= tmpdir();
const fileTmp = mkdtempSync(join(process.env[BASE], 'crm-'));
process.env.TMPDIR = fileTmp;

// registered first, so it runs after the file's own afterAll hooks (vitest runs them as a stack)
afterAll(() => {
  const left = readdirSync(fileTmp).filter((name) => name.startsWith('crm-'));
  rmSync(fileTmp, { recursive: true, force: true });
  process.env.TMPDIR = process.env[BASE];
  if (left.length > 0) {
    throw new Error(
      `left in the temporary folder after the tests: ${left.join(', ')} (remove them in afterAll/afterEach, e.g. with tempDir of test/helpers/temp.ts)`,
    );
  }
});
