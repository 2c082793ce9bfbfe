// What the input readers hand out: rows with their line, the reader itself, and its options (reader.ts opens a file
// as CSV, NDJSON, TSV or a JSON array; json-array.ts reads the last).
import type { InputFormat, RawRow } from '../shapes.js';

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

export type ReaderOptions = OpenInputOptions & { name: string; maxRecordBytes: number; encoding: string };
