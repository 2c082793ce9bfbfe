// `crm batch R export.csv --update`, and a plain create of an export (issue 28): an untyped cell is sent as the kind
// the collection's records hold its field as (one page, ImportDeps.knownFields) when it is written as JSON writes
// one — an exported 37, false, {"city":…}, ["vip"], 12345678901234567890123 — and as text otherwise (00501, " 7 ",
// a field whose records disagree). A resumed job types its cells as its first run did (its journal pins it).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { runImport, type ImportDeps } from '../../../src/import/engine.js';
import { updateOperation } from '../../../src/import/operation.js';
import { FieldKinds } from '../../../src/import/input/typing.js';
import { parseJson, stringifyJson } from '../../../src/json/exact-json.js';
import { tempDir } from '../../helpers/temp.js';

interface Run {
  /** the collection's records the one page gives (undefined: none read) */
  records: ApiRecord[] | undefined;
  /** default: a create */
  op?: 'update';
  dir?: string;
  /** stops the run once this many requests are answered */
  stopAfter?: number;
  chunkSize?: number;
}

async function run(csv: string, o: Run): Promise<ApiRecord[]> {
  const dir = o.dir ?? tempDir('crm-update-typing-');
  const input = join(dir, 'in.csv');
  writeFileSync(input, csv);
  const sent: ApiRecord[] = [];
  const kinds = new FieldKinds();
  for (const r of o.records ?? []) kinds.see(r);
  const stop = new AbortController();
  let requests = 0;
  const deps: ImportDeps = {
    send: async (req) => {
      sent.push(...req.records);
      if (++requests === o.stopAfter) stop.abort();
      const items = req.records.map((r, index) => ({ index, status: 'created', data: { id: r.id ?? `n${index}` } }));
      const summary = { total: items.length, succeeded: items.length, failed: 0 };
      return { envelope: { object: 'batch', data: { items, summary } } as never };
    },
    journalDir: join(dir, 'imports'),
    clock: { now: () => 1_000 },
    cwd: dir,
    signal: stop.signal,
    knownFields: o.records
      ? async () =>
          Object.assign(new Set(o.records!.flatMap((r) => Object.keys(r))), { sample: (f: string) => kinds.sample(f) })
      : undefined,
  };
  const operation = o.op === 'update' ? { operation: updateOperation('contacts') } : {};
  await runImport(
    { resource: 'contacts', input, baseUrl: 'http://fake/api/v2', chunkSize: o.chunkSize, ...operation },
    deps,
  ).catch((err: unknown) => {
    if (!stop.signal.aborted) throw err;
  });
  return sent;
}

const update = (csv: string, records: ApiRecord[] | undefined): Promise<ApiRecord[]> =>
  run(csv, { records, op: 'update' });

const held = parseJson(
  '[{"id":"c1","score":7,"vip":true,"zip":"00501","address":{"city":"P"},"tags":["a"],"big":12345678901234567890123,"note":0},' +
    '{"id":"c2","score":8,"vip":false,"zip":"10001","address":{},"tags":[],"big":1,"note":false}]',
) as ApiRecord[];

describe('an --update of an export', () => {
  it('sends each untyped cell as the kind its field’s records hold, when written as JSON writes it', async () => {
    const csv =
      'id,score,vip,zip,address,tags,big,note\n' +
      'c1,7,true,00501,"{""city"":""P""}","[""a""]",12345678901234567890123,0\n' +
      'c2,08,TRUE,10001,{},[],1.0,false\n';
    const sent = await update(csv, held);
    expect(sent.map((r) => stringifyJson(r))).toEqual([
      '{"id":"c1","score":7,"vip":true,"zip":"00501","address":{"city":"P"},"tags":["a"],"big":12345678901234567890123,"note":"0"}',
      // not as JSON writes it (08, TRUE, 1.0): text, as before; note's records disagree (0, false): text
      '{"id":"c2","score":"08","vip":"TRUE","zip":"10001","address":{},"tags":[],"big":"1.0","note":"false"}',
    ]);
  });

  it('without the records’ fields (none read), every untyped cell is text as before', async () => {
    const sent = await update('id,score\nc1,7\n', undefined);
    expect(sent).toEqual([{ id: 'c1', score: '7' }]);
  });
});

describe('a create of an export', () => {
  const csv =
    'email,score,vip,zip,address,tags,big\n' +
    'a@x.test,7,true,00501,"{""city"":""P""}","[""a""]",12345678901234567890123\n' +
    'b@x.test,08,false,10001,{},[],1.0\n' +
    'c@x.test,9,false,02134,"{""city"":""Q""}",[],2\n';

  it('sends each untyped cell as the kind its field’s records hold, when written as JSON writes it', async () => {
    const sent = await run(csv, { records: held });
    expect(sent.map((r) => stringifyJson(r))).toEqual([
      '{"email":"a@x.test","score":7,"vip":true,"zip":"00501","address":{"city":"P"},"tags":["a"],"big":12345678901234567890123}',
      '{"email":"b@x.test","score":"08","vip":false,"zip":"10001","address":{},"tags":[],"big":"1.0"}',
      '{"email":"c@x.test","score":9,"vip":false,"zip":"02134","address":{"city":"Q"},"tags":[],"big":2}',
    ]);
  });

  it('into an empty collection, every untyped cell is text as before', async () => {
    const sent = await run(csv, { records: undefined });
    expect(sent[0]).toMatchObject({ score: '7', address: '{"city":"P"}', tags: '["a"]' });
  });

  it('resumed after the records changed kinds, types the cells left as its first run did (the same chunks)', async () => {
    const dir = tempDir('crm-create-typing-resume-');
    const first = await run(csv, { records: held, dir, chunkSize: 1, stopAfter: 1 });
    expect(first).toHaveLength(1);
    // someone wrote text into score and tags since: the records now disagree on their kinds
    const changed = [...held, { id: 'c3', score: 'high', tags: 'none', address: 'x' }];
    const rest = await run(csv, { records: changed, dir, chunkSize: 1 });
    expect(rest.map((r) => stringifyJson(r))).toEqual([
      '{"email":"b@x.test","score":"08","vip":false,"zip":"10001","address":{},"tags":[],"big":"1.0"}',
      '{"email":"c@x.test","score":9,"vip":false,"zip":"02134","address":{"city":"Q"},"tags":[],"big":2}',
    ]);
    // a new job of the same file (--no-resume would start one) types by what the records hold now
    const again = await run(csv.replace('c@x.test', 'd@x.test'), { records: changed, chunkSize: 1 });
    expect(again[2]).toMatchObject({ score: '9', address: '{"city":"Q"}', tags: '[]', big: 2 });
  });
});
