// A full disk during `crm snapshot` (issue 28), on a real small file system (a tmpfs, so root only: the same logic
// is covered on any machine by test/unit/commands/snapshot/full-disk.property.test.ts, with ENOSPC injected). It was
// "unexpected failure … a bug in crm" with no way on; now it is exit 8 naming the file and its folder's free space,
// with the command that resumes; pasted once there is room, that command completes the folder, each record once.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crmOnPath, paste, runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';

const ROOT = process.getuid?.() === 0;

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({
    seed: 9,
    seedRecords: { contacts: 600 },
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
  });
});
afterAll(() => t.close());

async function listAll(resource: string): Promise<Array<{ id: string }>> {
  const all: Array<{ id: string }> = [];
  for (let cursor: string | null = null; ;) {
    const res = await fetch(`${t.sb.baseUrl}/${resource}?limit=100${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { 'X-Service-Api-Key': t.sb.keys.admin },
    });
    const body = (await res.json()) as {
      data: Array<{ id: string }>;
      page_info: { end_cursor: string | null; has_next_page: boolean };
    };
    all.push(...body.data);
    if (!body.page_info.has_next_page) return all;
    cursor = body.page_info.end_cursor;
  }
}

describe.skipIf(!ROOT)('crm snapshot on a full disk (a small tmpfs)', () => {
  it('exit 8 naming the file, its free space and the command that resumes; that command, with room, completes it', async () => {
    const home = tempDir('crm-snapshot-disk-');
    const bin = crmOnPath(home);
    const disk = join(home, 'small-disk');
    mkdirSync(disk);
    // room for the manifest, the lock and a page or two of the contacts, not for all 600
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', disk]);
    try {
      const dir = join(disk, 'backup');
      const r = await runCrm(['snapshot', dir, '--resources', 'contacts'], { env: t.env(), timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toMatch(
        new RegExp(`cannot write the snapshot file ${dir}/\\S+: the disk is full; \\d+ KiB free in ${dir}`),
      );
      expect(r.stderr).not.toMatch(/unexpected failure|a bug in crm/);
      const resume = /run the same command to resume: (.+)$/m.exec(r.stderr)?.[1];
      expect(resume).toBe(`crm snapshot ${dir} --resources contacts`);
      const manifest = () => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;
      expect(manifest().complete).toBe(false);

      // room again: the printed command, pasted, goes on from what was saved
      execFileSync('mount', ['-o', 'remount,size=4m', disk]);
      const again = await paste(resume!, { cwd: home, env: { ...t.env(), PATH: `${bin}:${process.env.PATH ?? ''}` } });
      expect(again.code, again.stderr).toBe(0);
      const lines = readFileSync(join(dir, 'contacts.ndjson'), 'utf8').split('\n').filter(Boolean);
      expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(await listAll('contacts'));
      expect(manifest()).toMatchObject({ complete: true, collections: { contacts: { records: 600 } } });
      expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
    } finally {
      execFileSync('umount', ['-l', disk]);
    }
  });
});
