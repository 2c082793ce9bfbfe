// The journal's files (CONTRACT §7): per (content, resource, base URL, key) a JSON-lines file: a header
// pinning the plan, then `sent`, `unsent`, `chunk` (fsynced) and `complete` lines. A torn last line is not
// JSON and is cut off; the earlier format's `"sum"` is ignored.
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { exists as there } from '../../util/fs.js';
import { trimBase, type CompleteInfo, type JournalIdentity } from '../types.js';
export { journalFolder, trimBase, type ChunkReject, type CompleteInfo, type FinishedChunk, type JournalIdentity } from '../types.js';

export const JOURNAL_VERSION = 1;

export interface HeaderLine {
  type: 'header';
  version: number;
  resource: string;
  base_url: string;
  key_id?: string;
  key_mask?: string;
  /** JournalIdentity.operation */
  operation?: string;
  /** JournalIdentity.options */
  options?: string;
  /** salts every Idempotency-Key of this journal's run (chunkKey); absent in journals from before run ids */
  run_id?: string;
  content_sha256: string;
  plan: string;
  input: string;
  created_at: string;
}

/** sha256 of the API key, truncated: tells keys apart without revealing them. */
export function keyIdentity(apiKey: string | undefined): string | undefined {
  return apiKey ? createHash('sha256').update(`crm-key\0${apiKey}`).digest('hex').slice(0, 16) : undefined;
}

/** What a journal's job was, for messages: `imported into contacts`, `used to update contacts`. */
export const jobOf = (id: Pick<JournalIdentity, 'resource' | 'operation'>): string =>
  id.operation ? `used to ${id.operation}` : `imported into ${id.resource}`;

export function journalPath(dir: string, id: JournalIdentity): string {
  const key = id.keyId ? `\0key:${id.keyId}` : '';
  const op = id.operation ? `\0op:${id.operation}` : '';
  const options = id.options ? `\0options:${id.options}` : '';
  const name = createHash('sha256')
    .update(`${id.contentSha256}\0${id.resource}\0${trimBase(id.baseUrl)}${key}${op}${options}`)
    .digest('hex');
  return join(dir, `${name}.jsonl`);
}

/** Where an import's journal is: its own file, or one from before keys were part of the name (adopted on open). */
export interface JournalFile {
  /** the file to read: this identity's, or the older one */
  path: string;
  own: string;
  exists: boolean;
}

export async function findJournal(dir: string, identity: JournalIdentity): Promise<JournalFile> {
  const own = journalPath(dir, identity);
  if (!identity.keyId || (await there(own))) return { path: own, own, exists: await there(own) };
  const legacy = journalPath(dir, { ...identity, keyId: undefined });
  const h = (await there(legacy)) ? await readHeader(legacy) : undefined;
  return h && h.key_id === undefined ? { path: legacy, own, exists: true } : { path: own, own, exists: false };
}

/** A journal line's value; undefined when it is not JSON (torn). The earlier format's `sum` is dropped. */
export function parseLine(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    if (v === null || typeof v !== 'object') return undefined;
    const { sum: _sum, ...rest } = v as Record<string, unknown>;
    return rest;
  } catch {
    return undefined;
  }
}

/** The first or last complete line of a file (64 KiB from that end), parsed. */
async function edgeLine(path: string, end: 'first' | 'last'): Promise<Record<string, unknown> | undefined> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return undefined;
  try {
    const { size } = await fh.stat();
    const n = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, end === 'first' ? 0 : size - n);
    const text = buf.toString('utf8');
    if (end === 'first') return parseLine(text.slice(0, Math.max(0, text.indexOf('\n'))));
    const stop = text.lastIndexOf('\n');
    const start = text.lastIndexOf('\n', stop - 1) + 1;
    return stop < 0 || (start === 0 && size > n) ? undefined : parseLine(text.slice(start, stop));
  } catch {
    return undefined;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

export async function readHeader(path: string): Promise<HeaderLine | undefined> {
  const h = await edgeLine(path, 'first');
  return h?.type === 'header' ? (h as unknown as HeaderLine) : undefined;
}

/** The `complete` line of a journal, when it is its last line. */
export async function readComplete(path: string): Promise<CompleteInfo | undefined> {
  const v = await edgeLine(path, 'last');
  return v?.type === 'complete' ? { ...v, at: String(v.at) } : undefined;
}

export const jsonLine = (value: object): string => `${JSON.stringify(value)}\n`;
