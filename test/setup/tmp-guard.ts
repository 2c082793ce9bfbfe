// Each test file gets its own temporary folder (TMPDIR, inside the run's: test/setup/tmp-global.ts),
// so what is left in it after the file's own afterAll hooks is that file's, whatever runs beside it.
// A `crm-*` entry left there fails the file (a test, a helper or crm itself forgot to remove it);
// the folder is removed either way.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { RUN_TMP_VAR } from './tmp-global.js';

const fileTmp = mkdtempSync(join(process.env[RUN_TMP_VAR] ?? tmpdir(), 'file-'));
process.env.TMPDIR = fileTmp;

// registered first, so it runs after the file's own afterAll hooks (vitest runs them as a stack)
afterAll(() => {
  const left = readdirSync(fileTmp).filter((name) => name.startsWith('crm-'));
  rmSync(fileTmp, { recursive: true, force: true });
  if (left.length > 0) {
    throw new Error(
      `left in the temporary folder after the tests: ${left.join(', ')} (remove them in afterAll/afterEach, e.g. with tempDir of test/helpers/temp.ts)`,
    );
  }
});
