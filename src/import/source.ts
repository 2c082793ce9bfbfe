// Where the rows come from. A file is read in place. Standard input (`-`) is first copied to a
// temporary file in the journal folder: the journal is keyed by the content's hash, which is only
// known at the end of the stream, and the import reads its input twice (a check, then the sending),
// which a pipe cannot do. Piping the same content again gives the same hash, so a rerun of
// `… | crm batch contacts -` resumes too. The copy is removed when the import ends.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UsageError } from '../http/errors.js';
import { ensureDir } from './fs-util.js';

export interface PreparedInput {
  /** a file that can be read more than once */
  path: string;
  /** how the input is named in messages: the path, or `-` */
  name: string;
  isStdin: boolean;
  cleanup(): Promise<void>;
}

export async function prepareInput(input: string | Readable, opts: { stdin?: Readable; tmpDir: string }): Promise<PreparedInput> {
  if (typeof input === 'string' && input !== '-') {
    return { path: input, name: input, isStdin: false, cleanup: async () => undefined };
  }
  const stream = typeof input === 'string' ? opts.stdin : input;
  if (!stream) throw new UsageError('no standard input to read (-)');
  await ensureDir(opts.tmpDir);
  const path = join(opts.tmpDir, `stdin-${process.pid}-${randomBytes(6).toString('hex')}.buf`);
  const cleanup = async (): Promise<void> => {
    await unlink(path).catch(() => undefined);
  };
  try {
    await pipeline(stream, createWriteStream(path, { mode: 0o600, flags: 'wx' }));
  } catch (err) {
    await cleanup();
    throw new UsageError(`cannot read standard input: ${(err as Error).message}`, { cause: err });
  }
  return { path, name: '-', isStdin: true, cleanup };
}
