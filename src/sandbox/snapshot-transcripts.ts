// `--from DIR` with a snapshot taken with `--transcripts` (docs/sandbox.md, "Serving a snapshot"):
// DIR/transcripts/<safe id>.json is the transcript of recording <id>, found by the same file name
// `crm snapshot` (the download engine) gave it. Each file is checked to be JSON at start (not JSON:
// the start fails naming it) and read again on each download, its text served as it is (so a
// download gives the snapshot's bytes back). A recording with `has_transcript` but no file gets the
// generated transcript (downloads.ts), its record unchanged: the start line counts them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiRecord } from '../api/envelopes.js';
import { fileNames } from '../util/safe-name.js';
import type { SandboxResponse } from './types.js';

/** the folder inside DIR (as `crm snapshot --transcripts` writes it) */
const FOLDER = 'transcripts';

/** recording id → its transcript file in the snapshot */
export type SnapshotTranscripts = ReadonlyMap<string, string>;

/** The transcript files of the snapshot in `dir` for these recordings; throws an Error naming a file that is not JSON. */
export function loadSnapshotTranscripts(
  dir: string,
  recordings: readonly ApiRecord[],
): { transcripts: SnapshotTranscripts; warnings: string[] } {
  const folder = join(dir, FOLDER);
  // the recordings the download engine took, in the same order: the same names
  const ids = recordings
    .filter((r) => r.has_transcript === true && typeof r.id === 'string' && r.id !== '')
    .map((r) => r.id as string);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      const none = `snapshot ${dir} holds no transcripts (it was taken without --transcripts): the ${ids.length} recordings with one each get a generated transcript`;
      return { transcripts: new Map(), warnings: ids.length > 0 ? [none] : [] };
    }
    throw new Error(
      `snapshot ${folder}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  const present = new Set(names.filter((n) => n.endsWith('.json')));
  for (const name of [...present].sort()) readTranscript(join(folder, name));
  const transcripts = new Map<string, string>();
  fileNames(ids).forEach((name, i) => {
    if (present.has(name)) transcripts.set(ids[i]!, join(folder, name));
  });
  const missing = ids.length - transcripts.size;
  const warnings =
    missing > 0
      ? [
          `snapshot ${folder}: ${missing} of ${ids.length} recordings with a transcript have no file there: each gets a generated transcript`,
        ]
      : [];
  return { transcripts, warnings };
}

/** The text of a transcript file, checked to be JSON; an Error naming the file otherwise. */
function readTranscript(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(
      `snapshot ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  try {
    JSON.parse(text);
  } catch (err) {
    throw new Error(`snapshot ${file}: not valid JSON (${(err as Error).message})`);
  }
  return text;
}

/**
 * The snapshot's transcript of recording `id` as served (its text), or undefined when the snapshot has
 * none; a file changed into something else while the sandbox runs throws (a 500 naming it).
 */
export function snapshotTranscript(
  transcripts: SnapshotTranscripts | undefined,
  id: string,
): SandboxResponse | undefined {
  const file = transcripts?.get(id);
  return file === undefined ? undefined : { status: 200, headers: {}, raw: readTranscript(file) };
}
