import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { convertCell } from '../../../src/import/input/header.js';
import type { BatchEnvelope, BatchItem } from '../../../src/api/envelopes.js';
import { csvLine, createRejectsWriter, createResultsWriter, keptColumns } from '../../../src/import/files/outputs.js';
import { defaultRejectsPath } from '../../../src/import/plan.js';
import { NO_RESULT_CODE, chunkOutcome } from '../../../src/import/send/outcome.js';
import type { HttpClient } from '../../../src/http/types.js';
import { httpBatchSender } from '../../../src/import/send/sender.js';
import { readAll, tempDir } from './helpers.js';

const envelope = (items: BatchItem[]): BatchEnvelope => ({
  object: 'batch',
  data: { items, summary: { total: items.length, succeeded: 0, failed: 0 } },
  meta: { api_version: '2', request_id: 'req_1', timestamp: '' },
});

describe('chunkOutcome', () => {
  it('maps items back to rows by index, whatever their order', () => {
    const out = chunkOutcome(
      3,
      envelope([
        { index: 2, status: 'created', data: { id: 'con_c' } },
        { index: 0, status: 'created', data: { id: 'con_a' } },
        { index: 1, status: 'error', error: { code: 'VALIDATION_FAILED', message: 'email is required' } },
      ]),
    );
    expect(out).toEqual({
      ids: ['con_a', null, 'con_c'],
      rejects: [{ i: 1, code: 'VALIDATION_FAILED', message: 'email is required' }],
      created: 2,
    });
  });

  it('a row without a result is reported, never assumed created; stray and repeated indexes are ignored', () => {
    const out = chunkOutcome(
      3,
      envelope([
        { index: 0, status: 'created', data: { id: 'con_a' } },
        { index: 0, status: 'error', error: { code: 'X', message: 'x' } },
        { index: 7, status: 'created', data: { id: 'con_z' } },
        { index: 2, status: 'created' },
      ]),
    );
    expect(out.ids).toEqual(['con_a', null, '']);
    expect(out.rejects).toEqual([
      { i: 1, code: NO_RESULT_CODE, message: expect.stringContaining('may or may not have been created') },
    ]);
    expect(out.created).toBe(2);
  });

  it('an error item without details still gets a code and message', () => {
    expect(chunkOutcome(1, envelope([{ index: 0, status: 'error' }])).rejects[0]).toMatchObject({
      code: 'ITEM_FAILED',
    });
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
  ])('%j → %j (no formula guard: the cells come back as read)', (v, out) => expect(csvLine([v])).toBe(`${out}\r\n`));
  it('rows end in CRLF', () => expect(csvLine(['a', 'b,c'])).toBe('a,"b,c"\r\n'));
});

describe('rejects file', () => {
  it('keeps ragged rows whole and the file rectangular: short rows padded, extra cells quoted in the message', async () => {
    const dir = tempDir();
    const w = await createRejectsWriter(join(dir, 'r.csv'), { format: 'csv', header: ['a', 'b', '_line'] });
    w.add(['1'], 2, 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 1');
    w.add(['1', '2', '9', '4', '5'], 3, 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 5');
    expect(await w.commit()).toBe(join(dir, 'r.csv'));
    const back = await readAll(join(dir, 'r.csv'));
    expect(back.header).toEqual(['a', 'b', '_line', '_error_code', '_error_message']);
    expect(back.rows.map((r) => r.cells)).toEqual([
      ['1', '', '2', 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 1'],
      ['1', '2', '3', 'INVALID_COLUMN_COUNT', 'expected 3 columns, got 5; cells beyond the header: "4", "5"'],
    ]);
  });

  it("the server's message is escaped (never imported back); the input's own cells are exact", async () => {
    const dir = tempDir();
    const w = await createRejectsWriter(join(dir, 'r.csv'), { format: 'csv', header: ['a', 'b'] });
    w.add(['a2', 'x,"y"'], 2, 'VALIDATION_FAILED', 'bad 2\nreally');
    await w.commit();
    expect((await readAll(join(dir, 'r.csv'))).rows[0]!.cells).toEqual([
      'a2',
      'x,"y"',
      '2',
      'VALIDATION_FAILED',
      'bad 2\\nreally',
    ]);
    expect(readdirSync(dir)).toEqual(['r.csv']);
  });

  it('lists rejects in line order, also beyond its memory limit (sorted runs spilled beside the target, merged, removed)', async () => {
    const dir = tempDir();
    const w = await createRejectsWriter(join(dir, 'r.csv'), { format: 'csv', header: ['a', 'b'], memoryBytes: 2000 });
    const lines = Array.from({ length: 500 }, (_, i) => (i * 7919) % 500).map((n) => n + 2);
    for (const l of lines) w.add([`a${l}`, 'x,"y"'], l, 'VALIDATION_FAILED', `bad ${l}\nreally`);
    // the runs are spilled in the background: wait for them to show (50 ms was not enough on a loaded machine)
    for (let i = 0; i < 500 && readdirSync(dir).length <= 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(readdirSync(dir).length).toBeGreaterThan(2); // spilled runs
    await w.commit();
    const back = await readAll(join(dir, 'r.csv'));
    expect(back.rows.map((r) => Number(r.cells![2]))).toEqual([...lines].sort((x, y) => x - y));
    expect(readdirSync(dir)).toEqual(['r.csv']);
  });

  it('discard removes spilled runs too', async () => {
    const dir = tempDir();
    const w = await createRejectsWriter(join(dir, 'r.csv'), { format: 'csv', header: ['a'], memoryBytes: 100 });
    for (let l = 50; l > 0; l--) w.add([`v${l}`], l, 'X', 'm');
    await w.discard();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('with no rejects, no file — and a stale one from an earlier run is removed', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'r.csv'), 'stale');
    const w = await createRejectsWriter(join(dir, 'r.csv'), { format: 'csv', header: ['a'] });
    expect(await w.commit()).toBeNull();
    expect(existsSync(join(dir, 'r.csv'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an input’s own reject columns are dropped', () => {
    expect(keptColumns(['email', '_line', '_error_code', '_error_message', '_note'])).toEqual([0, 4]);
  });

  it('default paths: beside the input, or crm-rejects-<time> in the working folder for stdin', () => {
    expect(defaultRejectsPath('/d/people.csv', 'csv', 0, '/w')).toBe('/d/people.csv.rejects.csv');
    expect(defaultRejectsPath('/d/p.ndjson', 'ndjson', 0, '/w')).toBe('/d/p.ndjson.rejects.ndjson');
    expect(defaultRejectsPath('-', 'csv', Date.UTC(2026, 10, 21, 23, 5, 9, 120), '/w')).toBe(
      '/w/crm-rejects-20261121T230509Z.csv',
    );
  });
});

describe('results file', () => {
  it('NDJSON input → CSV of _line, id and the keys (first seen order), nested values JSON-encoded', async () => {
    const dir = tempDir();
    const w = await createResultsWriter(join(dir, 'out.csv'), {
      format: 'ndjson',
      header: null,
      ndjsonKeys: ['email', 'meta', 'n', 'id'],
    });
    w.add({ email: 'a@x.io', meta: { k: [1, 'x'] }, n: 3, _line: 9 }, 1, 'con_1');
    w.add({ email: 'b@x.io', n: null }, 2, 'con_2');
    await w.commit();
    const back = await readAll(join(dir, 'out.csv'));
    expect(back.header).toEqual(['_line', 'id', 'email', 'meta', 'n']);
    expect(back.rows.map((r) => r.cells)).toEqual([
      ['1', 'con_1', 'a@x.io', '{"k":[1,"x"]}', '3'],
      ['2', 'con_2', 'b@x.io', '', ''],
    ]);
  });

  it('NDJSON input with more keys than the columns hold: the rest as JSON in _more', async () => {
    const dir = tempDir();
    const w = await createResultsWriter(join(dir, 'out.csv'), {
      format: 'ndjson',
      header: null,
      ndjsonKeys: ['a'],
      ndjsonKeysOverflow: true,
    });
    w.add({ a: 1, z: 'q' }, 1, 'con_1');
    await w.commit();
    expect(readFileSync(join(dir, 'out.csv'), 'utf8')).toBe('_line,id,a,_more\r\n1,con_1,1,"{""z"":""q""}"\r\n');
  });

  it('NDJSON input as CSV cells that read back as they were (issue 28): text formula-guarded, a key a row lacks empty', async () => {
    const dir = tempDir();
    const w = await createResultsWriter(join(dir, 'out.csv'), {
      format: 'ndjson',
      header: null,
      ndjsonKeys: ['__proto__', 'f', 'n'],
    });
    w.add(JSON.parse('{"f":"=SUM(A1)","n":"\'-12"}') as Record<string, unknown>, 1, 'con_1');
    w.add(JSON.parse('{"__proto__":{"a":1},"f":"x"}') as Record<string, unknown>, 2, 'con_2');
    await w.commit();
    const [, ...rows]: string[][] = parse(readFileSync(join(dir, 'out.csv'), 'utf8'));
    expect(rows).toEqual([
      ['1', 'con_1', '', "'=SUM(A1)", "''-12"],
      ['2', 'con_2', '{"a":1}', 'x', ''],
    ]);
    // as crm batch reads the cells: the guard undone, the values as they were
    expect(rows.map((r) => r.slice(3).map((c) => convertCell(c, 'string')))).toEqual([
      [
        { ok: true, value: '=SUM(A1)', empty: false },
        { ok: true, value: "'-12", empty: false },
      ],
      [
        { ok: true, value: 'x', empty: false },
        { ok: true, value: undefined, empty: true },
      ],
    ]);
  });

  it('NDJSON input to a .ndjson/.jsonl name stays NDJSON', async () => {
    const dir = tempDir();
    const w = await createResultsWriter(join(dir, 'out.jsonl'), { format: 'ndjson', header: null, ndjsonKeys: ['a'] });
    w.add({ a: 1 }, 1, 'con_1');
    await w.commit();
    expect(readFileSync(join(dir, 'out.jsonl'), 'utf8')).toBe('{"_line":1,"id":"con_1","a":1}\n');
  });
});

describe('httpBatchSender', () => {
  it('reports a replay (Idempotent-Replayed: true) with the envelope and retries', async () => {
    const envelope = { object: 'batch', data: { items: [], summary: { total: 0, succeeded: 0, failed: 0 } } };
    for (const [headers, replayed] of [
      [{ 'idempotent-replayed': 'true' }, true],
      [{}, false],
    ] as const) {
      const client = {
        request: async () => ({ status: 200, headers, body: envelope, retries: 1 }),
      } as unknown as HttpClient;
      const res = await httpBatchSender(client)({ resource: 'contacts', seq: 1, key: 'k', records: [], body: '[]' });
      expect(res).toEqual({ envelope, retries: 1, replayed });
    }
  });
});
