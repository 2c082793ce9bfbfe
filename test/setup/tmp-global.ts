// One temporary folder for the whole test run (TMPDIR, so os.tmpdir() of the tests and of every
// spawned crm points into it), removed at the end even when a worker died. Other processes on the
// machine (another test run, CI's Node 24 run) keep their own: nothing here looks outside it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const RUN_TMP_VAR = 'CRM_TESTS_RUN_TMPDIR_ROOT';

export default function setup(): () => void {
  const before = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), 'crm-test-run-'));
  process.env[RUN_TMP_VAR] = root;
  process.env.TMPDIR = root;
  return () => {
    rmSync(root, { recursive: true, force: true });
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
  };
}
