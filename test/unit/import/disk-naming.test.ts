// A full disk under a way-back file is named by that file (issue 27: the message named the journal's disk, not the
// one that was full): a FileHandle's write error carries no path, so the file that failed adds its own.
import { describe, expect, it } from 'vitest';
import { DiskError } from '../../../src/http/errors.js';
import { onDisk } from '../../../src/import/send/disk.js';
import { naming } from '../../../src/util/fs-error.js';

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

describe('a disk error named by its file', () => {
  it('the file that failed names it, and the engine then names that file, not its spool', () => {
    const err = naming(enospc(), '/data/people.csv.undo.csv');
    const e = onDisk(err, (err as { path?: string }).path === undefined ? '/cfg/imports/spool' : undefined);
    expect(e).toBeInstanceOf(DiskError);
    expect((e as DiskError).message).toBe('cannot write /data/people.csv.undo.csv: the disk is full');
    expect((e as DiskError).code).toBe('DISK_FULL');
  });

  it('an error that names its file already keeps that name', () => {
    const err = Object.assign(enospc(), { path: '/a/journal.jsonl' });
    expect((naming(err, '/b/other') as { path: string }).path).toBe('/a/journal.jsonl');
  });
});
