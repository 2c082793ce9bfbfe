// `crm batch R export.csv --update` (issue 28): an untyped cell is sent as the kind the collection's records hold
// its field as (one page, ImportDeps.knownFields) when it is written as JSON writes one — an exported 37, false,
// {"city":…}, ["vip"], 12345678901234567890123 — and as text otherwise (00501, " 7 ", a field whose records disagree).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { runImport, type ImportDeps } from '../../../src/import/engine.js';
import { updateOperation } from '../../../src/import/operation.js';
import { FieldKinds } from '../../../src/import/input/typing.js';
import { parseJson, stringifyJson } from '../../../src/json/exact-json.js';
import { tempDir } from '../../helpers/temp.js';

async function update(csv: string, records: ApiRecord[] | undefined): Promise<ApiRecord[]> {
  const dir = tempDir('crm-update-typing-');
  const input = join(dir, 'in.csv');
  writeFileSync(input, csv);
  const sent: ApiRecord[] = [];
  const kinds = new FieldKinds();
  for (const r of records ?? []) kinds.see(r);
  const deps: ImportDeps = {
    send: async (req) => {
      sent.push(...req.records);
      const items = req.records.map((r, index) => ({ index, status: 'created', data: { id: r.id } }));
      const summary = { total: items.length, succeeded: items.length, failed: 0 };
      return { envelope: { object: 'batch', data: { items, summary } } as never };
    },
    journalDir: join(dir, 'imports'),
    clock: { now: () => 1_000 },
    cwd: dir,
    knownFields: records
      ? async () =>
          Object.assign(new Set(records.flatMap((r) => Object.keys(r))), { sample: (f: string) => kinds.sample(f) })
      : undefined,
  };
  await runImport(
    { resource: 'contacts', input, baseUrl: 'http://fake/api/v2', operation: updateOperation('contacts') },
    deps,
  );
  return sent;
}

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
