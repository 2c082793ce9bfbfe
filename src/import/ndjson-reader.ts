// NDJSON input (`.ndjson`/`.jsonl`): one JSON object per line, each row carrying its line number;
// a line that is not JSON is an invalid row, never a reason to stop.
import { createInterface } from 'node:readline';
import { pipeline, type Readable, type Transform } from 'node:stream';
import { UsageError } from '../http/errors.js';
import type { InputReader, ReadRow } from './reader.js';
import { INVALID_CODES } from './rows.js';

export async function openNdjson(file: Readable, tap: Transform, name: string, bytes: () => number): Promise<InputReader> {
  let readError: unknown;
  pipeline(file, tap, (err) => {
    if (err) readError = err;
  });
  const lines = createInterface({ input: tap, crlfDelay: Infinity });
  const it = lines[Symbol.asyncIterator]();
  let lineNo = 0;
  const close = (): void => {
    lines.close();
    file.destroy();
  };
  const next = async (): Promise<ReadRow | null> => {
    for (;;) {
      const r = await it.next();
      if (r.done) {
        if (readError) throw new UsageError(`cannot read ${name}: ${(readError as Error).message}`, { cause: readError });
        return null;
      }
      lineNo++;
      let text = r.value;
      if (lineNo === 1 && text.startsWith('\ufeff')) text = text.slice(1);
      if (text.trim() === '') continue;
      try {
        const json: unknown = JSON.parse(text);
        const raw = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : text;
        return { line: lineNo, json, raw };
      } catch (err) {
        return { line: lineNo, raw: text, error: { code: INVALID_CODES.json, reason: `not valid JSON: ${(err as Error).message}` } };
      }
    }
  };
  const first = await next();
  if (!first) {
    close();
    throw new UsageError(`${name} is empty: no JSON object to import`);
  }
  async function* rows(): AsyncGenerator<ReadRow, void, undefined> {
    try {
      yield first!;
      for (;;) {
        const r = await next();
        if (!r) return;
        yield r;
      }
    } finally {
      close();
    }
  }
  return { format: 'ndjson', header: null, rows: rows(), bytesRead: bytes, close };
}
