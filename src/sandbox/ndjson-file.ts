// The lines of a snapshot's NDJSON file (`--from DIR`), each parsed and checked by the caller; an Error
// names the file and the line.
import { readFileSync } from 'node:fs';
import { parseJson } from '../json/exact-json.js';
import { needIn, type Need } from './validation.js';

/** Each non-blank line of `path` as JSON (numbers exact: src/json), with a check naming its line; throws an Error naming the file (and line). */
export function eachNdjsonLine(path: string, each: (value: unknown, need: Need, line: number) => void): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(
      `snapshot ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() === '') continue;
    let value: unknown;
    try {
      value = parseJson(lines[i]!);
    } catch (err) {
      throw new Error(`snapshot ${path} line ${i + 1}: not valid JSON (${(err as Error).message})`);
    }
    each(value, needIn(`snapshot ${path} line ${i + 1}`), i + 1);
  }
}
