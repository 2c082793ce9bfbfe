// A `.json` input: the array crm's `-o json` writes (`[`, records separated by `,`, `]`), read back element by element
// in bounded memory. Strings are skipped byte by byte (their quotes and backslashes are ASCII, never inside a UTF-8
// sequence); an element is what lies between two top-level separators, handed to the NDJSON line's reading.
import { createReadStream } from 'node:fs';
import { UsageError } from '../../http/errors.js';
import { LF } from '../../util/lines.js';
import type { InputReader, ReaderOptions, ReadRow } from './rows.js';

const [OPEN, CLOSE, BRACE, END_BRACE, COMMA, QUOTE, BACKSLASH] = [0x5b, 0x5d, 0x7b, 0x7d, 0x2c, 0x22, 0x5c];
const isSpace = (b: number): boolean => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** `rowOf`: an element's row (its text and the line it starts on), or `skip`; `tooLarge`: the row of an element over the limit. */
export async function openJsonArray(
  path: string,
  o: ReaderOptions,
  rowOf: (text: string, line: number) => ReadRow | 'skip',
  tooLarge: (line: number) => ReadRow,
): Promise<InputReader> {
  let bytes = 0;
  const file = createReadStream(path, { signal: o.signal });
  const close = (): void => void file.destroy();
  const notArray = (line: number, what: string): UsageError =>
    new UsageError(`${o.name}, line ${line}: ${what}`, {
      hint: 'a .json file is read as the array `-o json` writes; one object a line is a .ndjson file',
    });

  async function* rows(): AsyncGenerator<ReadRow, void, undefined> {
    let [depth, inString, escaped, ended, line] = [0, false, false, false, 1];
    // the element being read: its parts, size and first line (0: none yet)
    let [parts, size, startLine, over] = [[] as Buffer[], 0, 0, false];
    const take = (): ReadRow | 'skip' | undefined => {
      if (startLine === 0) return undefined;
      const row = over ? tooLarge(startLine) : rowOf(Buffer.concat(parts).toString('utf8'), startLine);
      [parts, size, startLine, over] = [[], 0, 0, false];
      return row;
    };
    try {
      for await (const chunk of file as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        o.onChunk?.(chunk);
        const from = bytes === chunk.length && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
        let at = startLine === 0 ? -1 : 0; // where the element's bytes start in this chunk (it may have begun before)
        const keep = (to: number): void => {
          if (at < 0 || over) return;
          size += to - at;
          if (size > o.maxRecordBytes) [over, parts] = [true, []];
          else parts.push(chunk.subarray(at, to));
        };
        for (let i = from; i < chunk.length; i++) {
          const b = chunk[i]!;
          if (b === LF) line++;
          if (inString) {
            if (escaped) escaped = false;
            else if (b === BACKSLASH) escaped = true;
            else if (b === QUOTE) inString = false;
            continue;
          }
          if (ended) {
            if (!isSpace(b)) throw notArray(line, 'there is more after the array’s closing `]`');
            continue;
          }
          if (depth === 0) {
            if (b === OPEN) depth = 1;
            else if (!isSpace(b)) throw notArray(line, 'not a JSON array (it does not start with `[`)');
            continue;
          }
          if (depth === 1 && (b === COMMA || b === CLOSE)) {
            keep(i);
            at = -1;
            const row = take();
            if (b === COMMA && row === undefined) throw notArray(line, 'an empty element (two commas)');
            if (row !== undefined && row !== 'skip') yield row;
            if (o.signal?.aborted) return;
            if (b === CLOSE) [depth, ended] = [0, true];
            continue;
          }
          if (startLine === 0 && !isSpace(b)) [startLine, at] = [line, i];
          if (b === QUOTE) inString = true;
          else if (b === OPEN || b === BRACE) depth++;
          else if (b === CLOSE || b === END_BRACE) depth--;
        }
        keep(chunk.length);
      }
      if (!ended) throw notArray(line, 'the array is not closed (no `]`): the file is cut short');
    } finally {
      close();
    }
  }
  return { format: 'ndjson', header: null, rows: rows(), bytesRead: () => bytes, close };
}
