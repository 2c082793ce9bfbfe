// Reading a JSON file the sandbox is given (keys, data file), with errors naming it; numbers exact (src/json).
import { readFileSync } from 'node:fs';
import { parseJson } from '../json/exact-json.js';

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
    return parseJson(text); // numbers kept exact (src/json): a record's digits are served as written
  } catch (err) {
    throw new Error(`${what}: not valid JSON (${(err as Error).message})`);
  }
}
