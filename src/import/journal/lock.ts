// One run of a job at a time (issue 17): two runs of one file at once both sent every row and each reported
// the other's as done by an earlier run. The job's lock is a file beside its journal holding the pid of the
// run that has it, made with O_EXCL; a lock whose process is gone (kill -9) is taken over.
import { unlinkSync } from 'node:fs';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { UsageError } from '../../http/errors.js';
import { atExit } from '../../util/atomic-file.js';
import { processAlive } from '../../util/fs.js';
import { jobOf, journalPath, type JournalIdentity } from './format.js';

/** The lock of a job: per content, resource, base URL and operation (not the key or options: those runs clash too). */
function lockPath(dir: string, identity: JournalIdentity): string {
  return `${journalPath(dir, { ...identity, keyId: undefined, options: undefined })}.lock`;
}

/**
 * Takes the job's lock, or refuses (exit 2, nothing sent) naming the run that has it; the returned function
 * releases it (and so does the process's exit).
 */
export async function lockJob(dir: string, identity: JournalIdentity, name: string): Promise<() => Promise<void>> {
  const path = lockPath(dir, identity);
  for (let attempt = 0; ; attempt++) {
    const fh = await open(path, 'wx', 0o600).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err;
      return undefined;
    });
    if (fh) {
      try {
        await fh.writeFile(`${process.pid}\n`);
      } finally {
        await fh.close();
      }
      const withdraw = atExit(() => unlinkSync(path));
      return async () => {
        withdraw();
        await unlink(path).catch(() => undefined);
      };
    }
    const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    // a lock just made may not hold its pid yet (one left empty by a kill -9 is stale after a minute)
    const named = Number.isInteger(pid) && pid > 0;
    const age = Date.now() - ((await stat(path).catch(() => undefined))?.mtimeMs ?? Date.now());
    const stale = named ? pid !== process.pid && !processAlive(pid) : age > 60_000;
    if (attempt > 0 || !stale) throw running(name, identity, pid, path);
    await unlink(path).catch(() => undefined);
  }
}

function running(name: string, identity: JournalIdentity, pid: number, path: string): UsageError {
  const who = Number.isInteger(pid) && pid > 0 ? `another crm (process ${pid})` : 'another crm';
  return new UsageError(`${who} is running this same job (${name} ${jobOf(identity)}) right now; nothing was sent`, {
    hint: `let it finish (or stop it), then run this command again: it sends only what is left. Lock: ${path}`,
  });
}
