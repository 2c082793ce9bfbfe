import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchEnvelope, BatchItem } from '../../../src/api/envelopes.js';
import { AtomicTextFile, writeFileAtomic } from '../../../src/import/atomic-file.js';
import { csvCell, csvRow } from '../../../src/import/csv-write.js';
import { NO_RESULT_CODE, chunkOutcome } from '../../../src/import/outcome.js';
import { ColumnProjection, createRejectsWriter, defaultRejectsPath } from '../../../src/import/rejects.js';
import { readAll, tempDir } from './helpers.js';

const envelope = (items: BatchItem[]): BatchEnvelope => ({
  object: 'batch',
  data: { items, summary: { total: items.length, succeeded: 0, failed: 0 } },
  meta: { api_version: '2', request_id: 'req_1', timestamp: '' },
});

describe('chunkOutcome', () => {
  it('maps items back to rows by index, whatever their order', () => {
    const out = chunkOutcome(3, envelope([
      { index: 2, status: 'created', data: { id: 'con_c' } },
      { index: 0, status: 'created', data: { id: 'con_a' } },
      { index: 1, status: 'error', error: { code: 'VALIDATION_FAILED', message: 'email is required' } },
    ]));
    expect(out).toEqual({ ids: ['con_a', null, 'con_c'], rejects: [{ i: 1, code: 'VALIDATION_FAILED', message: 'email is required' }], created: 2 });
  });

  it('a row without a result is reported, never assumed created; stray and repeated indexes are ignored', () => {
    const out = chunkOutcome(3, envelope([
      { index: 0, status: 'created', data: { id: 'con_a' } },
      { index: 0, status: 'error', error: { code: 'X', message: 'x' } },
      { index: 7, status: 'created', data: { id: 'con_z' } },
      { index: 2, status: 'created' },
    ]));
    expect(out.ids).toEqual(['con_a', null, '']);
    expect(out.rejects).toEqual([{ i: 1, code: NO_RESULT_CODE, message: expect.stringContaining('may or may not have been created') }]);
    expect(out.created).toBe(2);
  });

  it('an error item without details still gets a code and message', () => {
    expect(chunkOutcome(1, envelope([{ index: 0, status: 'error' }])).rejects[0]).toMatchObject({ code: 'ITEM_FAILED' });
  });
});

describe('CSV writing (RFC 4180)', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    ['=SUM(A1)', '=SUM(A1)'],
    ['', ''],
  ])('%j → %j', (v, out) => expect(csvCell(v)).toBe(out));
  it('rows end in CRLF', () => expect(csvRow(['a', 'b,c'])).toBe('a,"b,c"\r\n'));
});

describe('atomic files', () => {
  it('nothing appears under the name before commit; discard leaves the old file', async () => {
    const dir = tempDir();
    const target = join(dir, 'out.csv');
    writeFileSync(target, 'old');
    const f = await AtomicTextFile.create(target);
    f.write('x'.repeat(200_000));
    f.write('end');
    expect(readFileSync(target, 'utf8')).toBe('old');
    await f.discard();
    expect(readFileSync(target, 'utf8')).toBe('old');
    expect(readdirSync(dir)).toEqual(['out.csv']);
    const g = await AtomicTextFile.create(target);
    g.write('new');
    await g.commit();
    expect(readFileSync(target, 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['out.csv']);
    expect(() => g.write('late')).toThrow();
  });

  it('writeFileAtomic replaces a file whole', async () => {
    const dir = tempDir();
    await writeFileAtomic(join(dir, 'a'), 'one');
    await writeFileAtomic(join(dir, 'a'), 'two');
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('two');
    expect(readdirSync(dir)).toEqual(['a']);
  });
});

describe('rejects file', () => {
  it('keeps ragged rows whole: short rows padded, extra cells after the reject columns', async () => {
    const dir = tempDir();
    const w = await createRejectsWriter(join(dir, 'r.csv'), { format: 'csv', header: ['a', 'b', '_line'] });
    w.add(['1'], 2, 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 1');
    w.add(['1', '2', '9', '4', '5'], 3, 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 5');
    expect(await w.commit()).toBe(join(dir, 'r.csv'));
    const back = await readAll(join(dir, 'r.csv'));
    expect(back.header).toEqual(['a', 'b', '_line', '_error_code', '_error_message']);
    expect(back.rows.map((r) => r.cells)).toEqual([
      ['1', '', '2', 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 1'],
      ['1', '2', '3', 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 5', '4', '5'],
    ]);
  });

  it('with no rejects, no file — and a stale one from an earlier run is removed', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'r.csv'), 'stale');
    const w = await createRejectsWriter(join(dir, 'r.csv'), { format: 'csv', header: ['a'] });
    expect(await w.commit()).toBeNull();
    expect(existsSync(join(dir, 'r.csv'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('ColumnProjection drops an input’s own reject columns', () => {
    const p = new ColumnProjection(['email', '_line', '_error_code', '_error_message', '_note']);
    expect(p.names).toEqual(['email', '_note']);
    expect(p.cells(['a@b', '3', 'X', 'msg', 'n']).cells).toEqual(['a@b', 'n']);
  });

  it('default paths: beside the input, or crm-rejects-<time> in the working folder for stdin', () => {
    expect(defaultRejectsPath('/d/people.csv', 'csv', 0, '/w')).toBe('/d/people.csv.rejects.csv');
    expect(defaultRejectsPath('/d/p.ndjson', 'ndjson', 0, '/w')).toBe('/d/p.ndjson.rejects.ndjson');
    expect(defaultRejectsPath('-', 'csv', Date.UTC(2026, 10, 21, 23, 5, 9, 120), '/w')).toBe('/w/crm-rejects-20261121T230509Z.csv');
  });
});
