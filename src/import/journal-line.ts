// The on-disk format of an import journal (see journal.ts): JSON lines, each sealed with a checksum
// of its JSON as its last property (`…,"sum":"<16 hex>"}`). A line that fails its checksum (torn by
// a crash mid-append, or altered) is treated as absent; streamLines stops at the last complete line,
// so a torn tail is cut off on load. Also the cheap reads of one line: the header (from the file's
// start) and the `complete` line (from its end).
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';

export const JOURNAL_VERSION = 1;

export interface ChunkReject {
  /** item index in the chunk */
  i: number;
  code: string;
  message: string;
}

export interface FinishedChunk {
  seq: number;
  key: string;
  /** item index → input line */
  lines: number[];
  /** item index → created id (null: not created, see rejects; or created without an id) */
  ids: Array<string | null>;
  rejects: ChunkReject[];
}

/** The totals of a finished import, stored with its `complete` line. */
export interface CompleteInfo {
  at: string;
  /** the journal was cut down to its header and this line (pruning): no per-row ids any more */
  compacted?: boolean;
  rows?: number;
  created?: number;
  failed?: number;
  invalid?: number;
  /** of `failed`: rows the batch answer said nothing about (the unknown file, not the rejects file) */
  unknown?: number;
}

export interface HeaderLine {
  type: 'header';
  version: number;
  resource: string;
  base_url: string;
  key_id?: string;
  /** the key as people may see it (`service_live_…f3a9`, maskKey), never the key: names it in refusals */
  key_mask?: string;
  content_sha256: string;
  plan: string;
  input: string;
  created_at: string;
}

function checksum(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

/** `{…, "sum": …}`: the JSON of the value with a checksum of that JSON as its last property. */
export function sealLine(value: object): string {
  const json = JSON.stringify(value);
  return `${json.slice(0, -1)},"sum":"${checksum(json)}"}\n`;
}

/** The value of a sealed line, or undefined when it is torn or altered. */
export function openLine(line: string): Record<string, unknown> | undefined {
  const m = /^(.*),"sum":"([0-9a-f]{16})"\}$/s.exec(line);
  if (!m) return undefined;
  const json = `${m[1]}}`;
  if (checksum(json) !== m[2]) return undefined;
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * The type and seq of a sealed line, checking its checksum but parsing only its start (the
 * index needs no ids: parsing every chunk line's ids would only make garbage); undefined when
 * torn or altered.
 */
export function lineKind(line: string): { type: string; seq?: number } | undefined {
  const m = /^(.*),"sum":"([0-9a-f]{16})"\}$/s.exec(line);
  if (!m || checksum(`${m[1]}}`) !== m[2]) return undefined;
  const k = /^\{"type":"([a-z]+)"(?:,"seq":(\d+))?/.exec(line);
  return k ? { type: k[1]!, ...(k[2] !== undefined ? { seq: Number(k[2]) } : {}) } : undefined;
}

/** Calls `onLine(text, offset, length)` for each complete line; returns the bytes up to the last one. */
export async function streamLines(fh: FileHandle, onLine: (line: string, offset: number, length: number) => void): Promise<number> {
  const buf = Buffer.alloc(1024 * 1024);
  let carry: Buffer = Buffer.alloc(0);
  let pos = 0;
  let lineStart = 0;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    pos += bytesRead;
    const data = carry.length ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
    let from = 0;
    for (let nl = data.indexOf(10, from); nl !== -1; nl = data.indexOf(10, from)) {
      onLine(data.toString('utf8', from, nl), lineStart, nl - from);
      lineStart += nl - from + 1;
      from = nl + 1;
    }
    carry = Buffer.from(data.subarray(from));
  }
  return lineStart;
}

/** The last complete line of a file, reading only its end (undefined when there is none). */
async function lastLine(path: string): Promise<string | undefined> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'r');
    const { size } = await fh.stat();
    const n = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, size - n);
    const text = buf.toString('utf8');
    const end = text.lastIndexOf('\n');
    if (end < 0) return undefined;
    const start = text.lastIndexOf('\n', end - 1) + 1;
    return start === 0 && size > n ? undefined : text.slice(start, end);
  } catch {
    return undefined;
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/** The `complete` line of a journal, when it is its last line. */
export async function readComplete(path: string): Promise<CompleteInfo | undefined> {
  const line = await lastLine(path);
  const v = line === undefined ? undefined : openLine(line);
  return v?.type === 'complete' ? { ...v, at: String(v.at) } : undefined;
}

/** The header of a journal file, reading only its start. */
export async function readHeader(path: string): Promise<HeaderLine | undefined> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'r');
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString('utf8');
    const nl = text.indexOf('\n');
    const h = nl > 0 ? (openLine(text.slice(0, nl)) as unknown as HeaderLine | undefined) : undefined;
    return h?.type === 'header' ? h : undefined;
  } catch {
    return undefined;
  } finally {
    await fh?.close().catch(() => undefined);
  }
}
