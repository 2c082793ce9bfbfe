// An import file's rows, CSV or NDJSON, each with its line: a function of the bytes alone.
import { stat } from 'node:fs/promises';
import { UsageError } from '../../http/errors.js';
import { CsvReader } from './csv-reader.js';
import { UTF8 } from './encoding.js';
import { MAX_RECORD_BYTES, readInterrupted, type InputFormat, type InputReader, type OpenInputOptions } from './input-row.js';
import { openNdjson } from './ndjson-reader.js';

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
