// A CSV file that runs append to (the undo and created files of `--match`): opened again by a later
// run of the job, its rows read back, a torn last row (a crash in the middle of an append) cut off, and
// the header widened when this run writes more columns. Rows are appended whole (one write each, ending
// in CRLF), so everything before the last line break outside quotes is complete.
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { csvLine } from './outputs.js';

export interface CsvLog {
  /** the header as it now is on disk: the earlier one, then the wanted columns it lacked */
  header: string[];
  /** the earlier runs' complete rows, as parsed (cells as written, under the old header's columns) */
  rows: string[][];
  /** open for appending */
  fh: FileHandle;
}

/** The length of the text up to the end of its last complete record (a line break outside quotes). */
export function completeLength(text: string): number {
  let end = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) quoted = !quoted;
    else if (c === 0x0a && !quoted) end = i + 1;
  }
  return end;
}

/**
 * Open `path` for appending under `wanted` columns. A new file gets the header (atomically, so a crash
 * never leaves a file without one); an earlier one is read (`check` throws when its header is not this
 * kind of file) and rewritten atomically when its last row is torn or it lacks some of `wanted`.
 */
export async function openCsvLog(
  path: string,
  wanted: readonly string[],
  check: (header: string[]) => void,
): Promise<CsvLog> {
  const { records, complete, body } = await readCsvLog(path);
  const old = records[0];
  if (old !== undefined) check(old);
  const header = [...(old ?? []), ...wanted.filter((c) => !(old ?? []).includes(c))];
  const rows = records.slice(1);
  if (old === undefined || header.length > old.length || complete.length < body.length) {
    const width = header.length;
    const lines = rows.map((r) => csvLine([...r, ...Array<string>(Math.max(0, width - r.length)).fill('')]));
    await writeFileAtomic(path, csvLine(header) + lines.join(''));
  }
  return { header, rows, fh: await open(path, 'a') };
}

/** The log's complete records (its header first), read only: none when there is no file. */
export async function readCsvLog(path: string): Promise<{ records: string[][]; complete: string; body: string }> {
  const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  const body = (text ?? '').replace(/^\ufeff/, '');
  const complete = body.slice(0, completeLength(body));
  const records: string[][] = parse(complete, { relax_column_count: true, skip_empty_lines: true });
  return { records, complete, body };
}
