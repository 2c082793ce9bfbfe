// What the readers hand out (reader.ts opens them): rows with their line, the reader itself, its
// options, and the row-size limit shared by the CSV and NDJSON readers.
import type { InputFormat, RawRow } from '../shapes.js';
import { InterruptedError } from '../../http/errors.js';

export interface ReadRow {
  /** the 1-based line the row starts on */
  line: number;
  /** CSV: the cells (as many as the row has, which may differ from the header) */
  cells?: string[];
  json?: unknown;
  raw: RawRow;
  /** NDJSON: the line is not JSON */
  error?: { code: string; reason: string };
}

export interface InputReader {
  readonly format: InputFormat;
  /** CSV: the header row's cells; NDJSON: null */
  readonly header: string[] | null;
  readonly rows: AsyncGenerator<ReadRow, void, undefined>;
  /** bytes read so far (for progress / ETA) */
  bytesRead(): number;
  /** stop reading early (the generator's return() does the same) */
  close(): void;
}

export interface OpenInputOptions {
  format?: InputFormat;
  /** how the file is named in messages (`-` for stdin) */
  name?: string;
  /** every chunk of bytes read, in order (hashing) */
  onChunk?: (chunk: Buffer) => void;
  /** largest record (CSV) or line (NDJSON) read; a larger one is an invalid row (default MAX_RECORD_BYTES) */
  maxRecordBytes?: number;
  /** the encoding the file was transcoded from, for messages (the file itself is UTF-8) */
  encoding?: string;
  /** stops reading at once (InterruptedError) */
  signal?: AbortSignal;
  /** a RECORD_TOO_LARGE row of a fed-back rejects file was skipped (isTooLargePlaceholder) */
  onPlaceholder?: (line: number) => void;
  /** CSV: given the first row, the header to read it under when it is data, not a header (a file of bare ids) */
  headerless?: (first: readonly string[]) => string[] | undefined;
}

/** The largest row read (CSV record or NDJSON line), in bytes: an API row is far smaller, and memory stays a few times this. */
export const MAX_RECORD_BYTES = 1024 * 1024;
/** `_error_code` of a row over MAX_RECORD_BYTES */
export const RECORD_TOO_LARGE_CODE = 'RECORD_TOO_LARGE';

export function readInterrupted(name: string): InterruptedError {
  return new InterruptedError(
    `interrupted while reading ${name === '-' ? 'standard input' : name}; nothing more was sent`,
  );
}

/** Why a row over the limit has no cells in the rejects file, and how to import it (a new file, as a changed file is refused). */
export function tooLargeReason(
  max: number,
  at: { name: string; format: InputFormat; first: number; last: number },
): string {
  const lines = at.last > at.first ? `lines ${at.first}–${at.last}` : `line ${at.first}`;
  const file = at.name === '-' ? 'standard input' : at.name;
  const into = at.format === 'csv' ? 'a new file under a copy of its header line' : 'a new .ndjson file';
  return (
    `the row is larger than ${formatBytes(max)}, the limit for one row, so its cells are not copied here ` +
    `(importing this file skips this row): copy ${lines} of ${file} into ${into}, shorten the row, and import that file`
  );
}

const REJECT_KEYS = new Set(['_line', '_error_code', '_error_message', '_raw']);

/** A RECORD_TOO_LARGE row of a fed-back rejects file: skipped with a notice, not an EMPTY_ROW reject. */
export function isTooLargePlaceholder(cells: Iterable<readonly [string, unknown]>): boolean {
  let marked = false;
  for (const [k, v] of cells) {
    const key = k.trim();
    if (key === '_error_code') marked = v === RECORD_TOO_LARGE_CODE;
    else if (!REJECT_KEYS.has(key) && !(typeof v === 'string' && v.trim() === '')) return false;
  }
  return marked;
}

export type ReaderOptions = OpenInputOptions & { name: string; maxRecordBytes: number; encoding: string };

export function formatBytes(n: number): string {
  return n >= 1048576 ? `${Math.round(n / 1048576)} MiB` : n >= 1024 ? `${Math.round(n / 1024)} KiB` : `${n} bytes`;
}

export type { InputFormat, RawRow };
