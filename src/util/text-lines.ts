// The one reader of a text file line by line (NDJSON: a snapshot's collections and links, a delete's
// backup): streamed, never the whole file in memory.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * The non-blank lines of a UTF-8 file, in order; from byte `start` up to byte `end` (exclusive) when
 * given. A file that does not exist has none when `missingOk`, else its error is thrown.
 */
export async function* textLines(
  file: string,
  o: { start?: number; end?: number; missingOk?: boolean } = {},
): AsyncGenerator<string> {
  if (o.end !== undefined && o.end <= (o.start ?? 0)) return;
  const input = createReadStream(file, {
    encoding: 'utf8',
    start: o.start,
    end: o.end === undefined ? undefined : o.end - 1,
  });
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) if (line.trim() !== '') yield line;
  } catch (err) {
    if (o.missingOk && (err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  } finally {
    input.destroy();
  }
}

/** How many non-blank lines a file has (streamed). */
export async function countTextLines(file: string): Promise<number> {
  let n = 0;
  for await (const _ of textLines(file)) n++;
  return n;
}
