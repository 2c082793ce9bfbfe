// Which API key a restore's target was begun with (CONTRACT §10): `DIR/restore/<target>/key.json`, `{"key_id",
// "key_mask"}` (the key's one-way identity, as a batch journal keeps it, and its masked form; never the key). The id
// map is one per base URL (the key is kept by the first run that sends), and two organizations may share one (a real service's API host): a run with another key
// might be in another organization, where the id map's ids name nothing, and a run back in the first would then
// create its records a second time (the third trial pasted a hint into a shell holding another organization's key).
// So another key is refused (exit 2) before anything is read, naming the file to remove if it is the same
// organization (a key replaced).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../http/errors.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { shellWord } from '../shared/command-line.js';

interface TargetKey {
  key_id: string;
  key_mask: string;
}

/** Refuses a key other than the one the target's folder was begun with; `record`: writes this one when none is kept
 * (a run about to send: the server has taken the key, a key it refused is never kept). */
export async function checkTargetKey(
  workDir: string,
  key: { id?: string; mask?: string },
  record: boolean,
): Promise<void> {
  if (key.id === undefined) return;
  const file = join(workDir, 'key.json');
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const kept = text === undefined ? undefined : parseKept(text, file);
  if (kept === undefined) {
    if (record) await writeFileAtomic(file, `${JSON.stringify({ key_id: key.id, key_mask: key.mask ?? '' })}\n`);
    return;
  }
  if (kept.key_id === key.id) return;
  throw new UsageError(
    `this restore's target was begun with the API key ${sanitizeForTerminal(kept.key_mask)}, and this run's is ${key.mask ?? 'another'}: ` +
      `another key may be another organization at the same URL, where the id map's ids name nothing (nothing was read or sent)`,
    {
      hint:
        `run it with the key it was begun with (its profile: --profile NAME); ` +
        `if this key is the same organization's (a key replaced), or that organization is gone (a sandbox started again), remove ${shellWord(file)} and run again`,
    },
  );
}

function parseKept(text: string, file: string): TargetKey {
  try {
    const v = JSON.parse(text) as Partial<TargetKey>;
    if (typeof v.key_id === 'string' && typeof v.key_mask === 'string') return v as TargetKey;
  } catch {
    // not JSON: said below
  }
  throw new UsageError(`${sanitizeForTerminal(file)}: not a restore's key file (remove it to begin the target again)`);
}
