// Streams the rows of an import file: CSV through csv-parse (BOM, CRLF, quoted commas, quotes and
// newlines, ragged rows passed through for the row check to reject), or NDJSON (`.ndjson`/`.jsonl`,
// one JSON object per line). Every row carries the line it starts on. Memory holds the parser's
// read-ahead and at most one record (MAX_RECORD_BYTES, 1 MiB): a larger record is an invalid row
// (RECORD_TOO_LARGE, its cells not kept), skipped by a byte scan (RecordEndScanner) that never
// holds it; that row fed back from a rejects file is skipped like a blank line. The file is UTF-8
// (source.ts transcodes others); a row with a NUL byte or bytes that do not decode is an invalid
// row (INVALID_CHARACTER, INVALID_ENCODING), never sent with U+FFFD in place of what was written
// (the scan refuses a file with undecodable bytes first: text-check.ts); in the header it is a
// UsageError. On the abort signal reading
// stops at once with InterruptedError, however long the record being read.
// A quoted field that is never closed makes the row it opens in an invalid row (UNCLOSED_QUOTE),
// and a fresh parser reads on from the next line, so the other rows are read as usual; the rows
// are a function of the bytes alone, so the check pass and the sending pass see the same rows and
// lines. Other malformed CSV (a header with an unclosed quote or beyond the size limit)
// stops with a UsageError that names the line; the engine reads the file once before sending
// anything, so that error comes before any request.
import { open, stat } from 'node:fs/promises';
import { UsageError } from '../http/errors.js';
import { openCsv } from './csv-reader.js';
import { UTF8 } from './encoding.js';
import { MAX_RECORD_BYTES, readInterrupted, type InputFormat, type InputReader, type OpenInputOptions } from './input-row.js';
import { openNdjson } from './ndjson-reader.js';

export { splitLine, UNCLOSED_QUOTE_CODE, UNCLOSED_QUOTE_REASON } from './quote-scan.js';
export * from './input-row.js';

export function detectFormat(path: string): InputFormat {
  return /\.(ndjson|jsonl)$/i.test(path) ? 'ndjson' : 'csv';
}

/**
 * Whether a file about to be read as CSV by default (not named .ndjson/.jsonl, or stdin) starts
 * like NDJSON: its first non-blank byte is `{`. Read as CSV, such a file fails row by row with
 * "expected N columns" errors; it is refused instead, pointing at --input-format. The format is
 * never guessed: what is read stays predictable from the name and the flag.
 */
export async function startsLikeJson(path: string): Promise<boolean> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return false; // the scan reports an unreadable input
  try {
    const buf = Buffer.alloc(256);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const head = buf
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\ufeff/, '');
    return /^\s*\{/.test(head);
  } finally {
    await fh.close();
  }
}

/** Opens the file and reads its header (CSV) or first record (NDJSON). */
export async function openInput(path: string, opts: OpenInputOptions = {}): Promise<InputReader> {
  const name = opts.name ?? path;
  try {
    const st = await stat(path);
    if (st.isDirectory()) throw new UsageError(`cannot read ${name}: it is a directory`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${name}: ${(err as Error).message}`, { cause: err });
  }
  if (opts.signal?.aborted) throw readInterrupted(name);
  const format = opts.format ?? detectFormat(path);
  const o = { ...opts, name, maxRecordBytes: opts.maxRecordBytes ?? MAX_RECORD_BYTES, encoding: opts.encoding ?? UTF8 };
  return format === 'csv' ? openCsv(path, o) : openNdjson(path, o);
}
