// The sandbox's two file chores: reading a JSON file it is given (keys, data), and writing the data
// file atomically (the one atomic writer, src/util/atomic-file.ts).
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../util/atomic-file.js';

/** The parsed content of `path`, undefined when it does not exist and `missingOk`; throws an Error naming `what`. */
export function readJsonFile(path: string, what: string, missingOk = false): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (missingOk && code === 'ENOENT') return undefined;
    throw new Error(`${what}: cannot read it (${code ?? (err as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what}: not valid JSON (${(err as Error).message})`);
  }
}

/** Writes `path` atomically: a temporary file in the same folder (mode 0600), fsynced, renamed over it. */
export const writeAtomic = (path: string, text: string): Promise<void> => writeFileAtomic(path, text);
