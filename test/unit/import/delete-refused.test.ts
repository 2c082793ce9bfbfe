// A DELETE's error → was the record deleted? (src/import/files/backup.ts `notDeleted`), and a backup that drops the
// records whose DELETE was refused when it closes, keeping every other line (an earlier run's included).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorClassForStatus, ServerError } from '../../../src/http/errors.js';
import { notDeleted, openBackup } from '../../../src/import/files/backup.js';
import { runs } from '../../helpers/property.js';
import { tempDir } from '../../helpers/temp.js';

const errorOf = (status: number) => new (errorClassForStatus(status))(`HTTP ${status}`, { status });

describe('notDeleted', () => {
  it('a 4xx says the record is still there (a 404 only on a first attempt); 5xx, 408, 425, 429 leave it in doubt', () => {
    fc.assert(
      fc.property(fc.integer({ min: 400, max: 599 }), fc.boolean(), (status, resent) => {
        const expected = status < 500 && ![408, 425, 429].includes(status) && !(status === 404 && resent);
        expect(notDeleted(errorOf(status), resent)).toBe(expected);
      }),
      runs(300),
    );
  });

  it('a request no attempt of which was sent did not delete; an error that is not the server’s says nothing', () => {
    const unsent = new ServerError('no connection');
    Object.assign(unsent, { unsent: true });
    expect(notDeleted(unsent, false)).toBe(true);
    expect(notDeleted(new ServerError('reset'), false)).toBe(false);
    expect(notDeleted(new Error('bug'), false)).toBe(false);
  });
});

describe('a backup whose DELETEs were refused', () => {
  it('loses those records when it closes, and keeps the others, an earlier run’s too', async () => {
    const path = join(tempDir('crm-refused-'), 'b.ndjson');
    writeFileSync(path, '{"id":"con_old","n":1}\n', { mode: 0o600 });
    const backup = await openBackup(path);
    for (const id of ['con_a', 'con_b', 'con_c']) await backup.keep({ id, n: 2 } as { id: string });
    backup.refused('con_b');
    // an earlier run's line stays: its DELETE is why this run finds the record gone (404)
    backup.refused('con_old');
    expect(backup.has('con_b')).toBe(false);
    expect(backup.has('con_old')).toBe(true);
    await backup.close();
    expect(readFileSync(path, 'utf8')).toBe('{"id":"con_old","n":1}\n{"id":"con_a","n":2}\n{"id":"con_c","n":2}\n');
  });
});
