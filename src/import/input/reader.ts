// An import file's rows, CSV or NDJSON, each with its line: a function of the bytes alone (the CSV reader: csv-reader.ts).
import { stat } from 'node:fs/promises';
import { UsageError } from '../../http/errors.js';
import { CsvReader } from './csv-reader.js';
import { INVALID_ENCODING, undecodable, UTF8 } from './text.js';
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { splitLines } from '../../util/lines.js';
import {
  isTooLargePlaceholder,
  MAX_RECORD_BYTES,
  readInterrupted,
  RECORD_TOO_LARGE_CODE,
  tooLargeReason,
  type InputFormat,
  type InputReader,
  type OpenInputOptions,
  type ReaderOptions,
  type ReadRow,
} from './input-row.js';
import { INVALID_CODES } from './header.js';
import { inexactJsonNumber } from '../../json/exact-json.js';

export { splitLine, UNCLOSED_QUOTE_CODE, UNCLOSED_QUOTE_REASON } from './quote-scan.js';
export * from './input-row.js';
export function detectFormat(path: string): InputFormat {
  return /\.(ndjson|jsonl)$/i.test(path) ? 'ndjson' : 'csv';
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
  return format === 'csv' ? new CsvReader(path, o).open() : openNdjson(path, o);
}

// NDJSON rows, split on bytes (LF, CRLF, CR): a line over the limit is dropped as read (RECORD_TOO_LARGE),
// one that is not JSON or not UTF-8 is an invalid row.
/** One line's row; `skip` for a blank line or a placeholder row of a fed-back rejects file. */
function lineRow(buf: Buffer | null, line: number, o: ReaderOptions): ReadRow | 'skip' {
  if (buf === null) {
    const reason = tooLargeReason(o.maxRecordBytes, { name: o.name, format: 'ndjson', first: line, last: line });
    return { line, raw: '', error: { code: RECORD_TOO_LARGE_CODE, reason } };
  }
  if (line === 1 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
  const text = buf.toString('utf8');
  if (!isUtf8(buf))
    return { line, raw: text, error: { code: INVALID_ENCODING, reason: undecodable(o.encoding, 'the line') } };
  if (text.trim() === '') return 'skip';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return {
      line,
      raw: text,
      error: { code: INVALID_CODES.json, reason: `not valid JSON: ${(err as Error).message}` },
    };
  }
  // JSON.parse rounds such a number; sending it rounded would silently change the data
  const inexact = inexactJsonNumber(text);
  if (inexact !== undefined) {
    const reason = `holds ${inexact.slice(0, 40)}, a number that cannot be imported exactly (a double holds about 15 significant digits); write it as a string`;
    return { line, raw: text, error: { code: INVALID_CODES.value, reason } };
  }
  const raw =
    json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : text;
  if (typeof raw === 'object' && isTooLargePlaceholder(Object.entries(raw))) {
    o.onPlaceholder?.(line);
    return 'skip';
  }
  return { line, json, raw };
}

export async function openNdjson(path: string, o: ReaderOptions): Promise<InputReader> {
  let bytes = 0;
  const file = createReadStream(path, { signal: o.signal });
  async function* tap(): AsyncGenerator<Buffer, void, undefined> {
    for await (const chunk of file as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      o.onChunk?.(chunk);
      yield chunk;
    }
  }
  const lines = splitLines(tap(), o.maxRecordBytes);
  let lineNo = 0;
  let placeholders = 0;
  const close = (): void => {
    file.destroy();
    void lines.return(undefined).catch(() => undefined);
  };
  const lo = { ...o, onPlaceholder: (l: number) => (placeholders++, o.onPlaceholder?.(l)) };
  const next = async (): Promise<ReadRow | null> => {
    for (;;) {
      const r = await lines.next().catch((err: unknown) => {
        if (o.signal?.aborted) throw readInterrupted(o.name);
        throw new UsageError(`cannot read ${o.name}: ${(err as Error).message}`, { cause: err });
      });
      if (o.signal?.aborted) throw readInterrupted(o.name);
      if (r.done) return null;
      const row = lineRow(r.value, ++lineNo, lo);
      if (row !== 'skip') return row;
    }
  };
  const first = await next().catch((err: unknown) => {
    close();
    throw err;
  });
  // a fed-back rejects file of placeholder rows only is not empty: it is imported as no rows
  if (!first && placeholders === 0) {
    close();
    throw new UsageError(`${o.name} is empty: no JSON object to import`);
  }
  async function* rows(): AsyncGenerator<ReadRow, void, undefined> {
    try {
      for (let r = first; r; r = await next()) yield r;
    } finally {
      close();
    }
  }
  return { format: 'ndjson', header: null, rows: rows(), bytesRead: () => bytes, close };
}
