// The files of a reconcile (src/import/files/match-files.ts): the undo and created files appended across
// runs (first value wins, columns widened, a torn last row cut off when reopened, adds that share one
// fsync and resolve only once their row is on disk), the ambiguous file and the --plan file.
import { existsSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runs } from '../../helpers/property.js';
import { convertCell, parseHeader } from '../../../src/import/input/header.js';
import { AmbiguousFile, CreatedFile, PlanFile, UndoFile } from '../../../src/import/files/way-back.js';
import { completeLength } from '../../../src/import/files/csv-log.js';
import { tempDir } from '../../helpers/temp.js';

const dir = tempDir('crm-match-files-');
let n = 0;
const fresh = (name: string): string => join(dir, `${n++}-${name}`);
const rows = (path: string): string[][] => parse(readFileSync(path, 'utf8'), { bom: true });
/** the undo file as id → field → value, as `crm batch --update` reads its cells */
function undoValues(path: string): Map<string, Record<string, unknown>> {
  const [head, ...body] = rows(path);
  const out = new Map<string, Record<string, unknown>>();
  for (const r of body) {
    const rec = out.get(r[0]!) ?? {};
    head!.slice(1).forEach((h, i) => {
      const v = convertCell(r[i + 1]!, 'json');
      if (v.ok && !v.empty) rec[h.replace(/:json$/, '')] ??= v.value;
    });
    out.set(r[0]!, rec);
  }
  return out;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('UndoFile', () => {
  it('writes id and FIELD:json columns, JSON of every type, null for absent, guarded so a spreadsheet runs nothing', async () => {
    const path = fresh('u.csv');
    const u = await UndoFile.open(path, ['a', 'b', 'c', 'd']);
    expect(u.path).toBe(path);
    await u.add('c_1', { a: '=1+1, "x"\nline', b: -5, c: null, d: undefined });
    await u.add('c_2', { a: [1, { k: 'v' }], b: { n: true } });
    await u.close();
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith('id,a:json,b:json,c:json,d:json\r\n')).toBe(true);
    expect(rows(path)[1]).toEqual(['c_1', '"=1+1, \\"x\\"\\nline"', "'-5", 'null', 'null']);
    expect(rows(path)[2]).toEqual(['c_2', '[1,{"k":"v"}]', '{"n":true}', '', '']);
    expect(undoValues(path)).toEqual(
      new Map([
        ['c_1', { a: '=1+1, "x"\nline', b: -5, c: null, d: null }],
        ['c_2', { a: [1, { k: 'v' }], b: { n: true } }],
      ]),
    );
  });

  it('appends across two opens (header once); the first value saved for an (id, field) wins, also across runs', async () => {
    const path = fresh('u.csv');
    const first = await UndoFile.open(path, ['a', 'b']);
    await first.add('c_1', { a: 'old' });
    await first.add('c_1', { a: 'newer' }); // already saved: nothing written
    await first.close();
    const second = await UndoFile.open(path, ['a', 'b']);
    await second.add('c_1', { a: 'third', b: 1 }); // only b is new
    await second.add('c_2', { a: 'x' });
    await second.close();
    const all = rows(path);
    expect(all).toEqual([
      ['id', 'a:json', 'b:json'],
      ['c_1', '"old"', ''],
      ['c_1', '', '1'],
      ['c_2', '"x"', ''],
    ]);
    expect(undoValues(path).get('c_1')).toEqual({ a: 'old', b: 1 });
  });

  it('a later run with more fields widens the header atomically: old rows get empty cells', async () => {
    const path = fresh('u.csv');
    const first = await UndoFile.open(path, ['a']);
    await first.add('c_1', { a: 1 });
    await first.close();
    const second = await UndoFile.open(path, ['b', 'a']);
    await second.add('c_1', { a: 2, b: 'x' });
    await second.close();
    expect(rows(path)).toEqual([
      ['id', 'a:json', 'b:json'],
      ['c_1', '1', ''],
      ['c_1', '', '"x"'],
    ]);
    expect(existsSync(path) && readFileSync(path, 'utf8').split('\r\n').length).toBe(4);
  });

  it('refuses a file that is not an undo file', async () => {
    const path = fresh('u.csv');
    writeFileSync(path, 'email,name\r\na@x,b\r\n');
    await expect(UndoFile.open(path, ['a'])).rejects.toThrow(/not an undo file/);
    expect(readFileSync(path, 'utf8')).toBe('email,name\r\na@x,b\r\n');
  });

  it('names a field a plain header would read as another exactly ("firstName":json), also when reopened (issue 28)', async () => {
    const path = fresh('u.csv');
    const names = ['firstName', '__proto__', 'First Name', 'tags:list', 'a.b'];
    const u = await UndoFile.open(path, names);
    await u.add('c_1', Object.fromEntries(names.map((n, i) => [n, i])));
    await u.close();
    const [head] = rows(path);
    expect(head).toEqual([
      'id',
      '"firstName":json',
      '"__proto__":json',
      '"First Name":json',
      '"tags:list":json',
      '"a.b":json',
    ]);
    // read as crm batch reads a header: each column is its field, exactly
    expect(parseHeader(head!, new Map(), ['id']).columns.map((c) => [c.field, c.type])).toEqual([
      ['id', 'string'],
      ...names.map((n) => [n, 'json']),
    ]);
    const again = await UndoFile.open(path, names); // the same columns, not new ones
    await again.close();
    expect(rows(path)[0]).toEqual(head);
  });

  it('cut at any byte (a crash in an append): reopened, the complete rows stay, the torn one goes, the next add is a whole row', async () => {
    const whole = fresh('whole.csv');
    const u = await UndoFile.open(whole, ['a', 'b']);
    const values: Array<[string, Record<string, unknown>]> = [
      ['c_1', { a: 'x,"y"\nz', b: 1 }],
      ['c_2', { a: null }],
      ['c_3', { b: [1, 'a,b'] }],
      ['c_4', { a: '=cmd', b: { q: '"' } }],
    ];
    for (const [id, v] of values) await u.add(id, v);
    await u.close();
    const text = readFileSync(whole, 'utf8');
    const headerEnd = text.indexOf('\r\n') + 2;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: text.length }), async (cut) => {
        const path = fresh('cut.csv');
        writeFileSync(path, text.slice(0, cut));
        const again = await UndoFile.open(path, ['a', 'b']);
        await again.add('c_9', { a: 9 });
        await again.close();
        const got = rows(path);
        expect(got[0]).toEqual(['id', 'a:json', 'b:json']);
        expect(got.every((r) => r.length === 3)).toBe(true);
        const complete = cut < headerEnd ? 0 : text.slice(headerEnd, cut).split('\r\n').length - 1;
        const kept = rows(whole).slice(1, 1 + complete);
        expect(got.slice(1)).toEqual([...kept, ['c_9', '9', '']]);
      }),
      runs(60),
    );
  });

  it('adds arriving during a write share the next fsync; each resolves only once its row is on disk', async () => {
    const path = fresh('u.csv');
    const probe = await open(path, 'w');
    const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const u = await UndoFile.open(path, ['a']);
    const sync = vi.spyOn(proto, 'sync');
    const seen: boolean[] = [];
    const adds = Array.from({ length: 50 }, (_, i) =>
      u.add(`c_${i}`, { a: i }).then(() => seen.push(readFileSync(path, 'utf8').includes(`c_${i},${i}\r\n`))),
    );
    // the same pair again while its row is queued: resolves with that row's fsync, writes nothing
    const twin = u
      .add('c_49', { a: 'later' })
      .then(() => seen.push(readFileSync(path, 'utf8').includes('c_49,49\r\n')));
    await Promise.all([...adds, twin]);
    await u.close();
    expect(seen).toEqual(Array(51).fill(true));
    expect(sync.mock.calls.length).toBe(2); // the first row alone, then the 49 that arrived meanwhile
    expect(rows(path).length).toBe(51);
  });

  it('a write that fails rejects its add and every later one', async () => {
    const path = fresh('u.csv');
    const u = await UndoFile.open(path, ['a']);
    const probe = await open(fresh('p'), 'w');
    const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    vi.spyOn(proto, 'sync').mockRejectedValueOnce(Object.assign(new Error('no space'), { code: 'ENOSPC' }));
    // a DiskError (exit 8) naming the undo file and its folder's free space, not the journal (CONTRACT §7c)
    const named = new RegExp(
      `^cannot write the undo file ${path}: the disk is full; \\d+ KiB free in .*; its change was not sent$`,
    );
    await expect(u.add('c_1', { a: 1 })).rejects.toThrow(named);
    await expect(u.add('c_2', { a: 2 })).rejects.toThrow(named);
    await u.close();
  });
});

describe('completeLength', () => {
  it('ends after the last line break outside quotes', () => {
    expect(completeLength('a,b\r\nc,"d\ne')).toBe(5);
    expect(completeLength('a,b\r\nc,"d\ne"\r\n')).toBe(14);
    expect(completeLength('a,b')).toBe(0);
  });
});

describe('CreatedFile', () => {
  it('id, _line, the match columns; appended across runs with the header once; a match column naming the id kept as _input_…', async () => {
    const path = fresh('c.csv');
    const first = await CreatedFile.open(path, ['email']);
    first.add('c_1', 2, ['a@example.com']);
    first.add('-c_2', 3, ['b,"q"@example.com']);
    await first.close();
    const second = await CreatedFile.open(path, ['email']);
    second.add('c_3', 7, ['c@example.com']);
    await second.close();
    expect(rows(path)).toEqual([
      ['id', '_line', 'email'],
      ['c_1', '2', 'a@example.com'],
      ["'-c_2", '3', 'b,"q"@example.com'],
      ['c_3', '7', 'c@example.com'],
    ]);
    const byId = await CreatedFile.open(fresh('c.csv'), ['ID', 'name']);
    byId.add('c_4', 2, ['x', 'n']);
    await byId.close();
    expect(rows(byId.path)).toEqual([
      ['id', '_line', '_input_ID', 'name'],
      ['c_4', '2', 'x', 'n'],
    ]);
  });

  it('lists each record once: an id it holds (a resumed run replaying a create) is not added again, across runs', async () => {
    const path = fresh('c.csv');
    const first = await CreatedFile.open(path, ['email']);
    first.add('-c_1', 2, ['a@example.com']);
    first.add('-c_1', 2, ['a@example.com']);
    await first.close();
    const second = await CreatedFile.open(path, ['email']);
    second.add('-c_1', 2, ['a@example.com']);
    second.add('c_2', 3, ['b@example.com']);
    await second.close();
    expect(rows(path)).toEqual([
      ['id', '_line', 'email'],
      ["'-c_1", '2', 'a@example.com'],
      ['c_2', '3', 'b@example.com'],
    ]);
  });

  it('a torn last row is cut off when reopened', async () => {
    const path = fresh('c.csv');
    writeFileSync(path, 'id,_line,email\r\nc_1,2,a@x\r\nc_2,3,"b@');
    const f = await CreatedFile.open(path, ['email']);
    f.add('c_3', 4, ['c@x']);
    await f.close();
    expect(rows(path)).toEqual([
      ['id', '_line', 'email'],
      ['c_1', '2', 'a@x'],
      ['c_3', '4', 'c@x'],
    ]);
    truncateSync(path, 0); // an empty file (killed before the header was written) starts again
    const g = await CreatedFile.open(path, ['email']);
    await g.close();
    expect(rows(path)).toEqual([['id', '_line', 'email']]);
  });
});

describe('AmbiguousFile and PlanFile', () => {
  it('ambiguous: the row as written, _line and _candidates; a stale copy of those columns dropped; none: no file (a stale one removed)', async () => {
    const path = fresh('a.csv');
    const a = await AmbiguousFile.create(path, { format: 'csv', header: ['email', '_line', 'name'] });
    a.add(['x@y', '9', '=n'], 4, ['c_1', 'c_2']);
    expect(await a.commit()).toBe(path);
    expect(rows(path)).toEqual([
      ['_line', '_candidates', 'email', 'name'],
      ['4', 'c_1;c_2', 'x@y', '=n'],
    ]);
    const none = await AmbiguousFile.create(path, { format: 'csv', header: ['email'] });
    expect(await none.commit()).toBeNull();
    expect(existsSync(path)).toBe(false);
  });

  it('plan: _line, _action, id, _changes, then the row (its own id column as _input_id); NDJSON rows by key, or whole objects to .ndjson', async () => {
    const path = fresh('plan.csv');
    const p = await PlanFile.create(path, { format: 'csv', header: ['id', 'email', 'first_name'] });
    p.add(2, 'update', 'c_1', 'first_name: "A" → "B"', ['c_1', 'a@x', 'B']);
    p.add(3, 'create', undefined, '', ['', 'b@x', '-x']);
    expect(await p.commit()).toBe(path);
    expect(rows(path)).toEqual([
      ['_line', '_action', 'id', '_changes', '_input_id', 'email', 'first_name'],
      ['2', 'update', 'c_1', 'first_name: "A" → "B"', 'c_1', 'a@x', 'B'],
      ['3', 'create', '', '', '', 'b@x', '-x'],
    ]);
    const nd = await PlanFile.create(fresh('plan.csv'), {
      format: 'ndjson',
      header: null,
      ndjsonKeys: ['email', 'tags'],
    });
    nd.add(1, 'unchanged', 'c_2', '', { email: 'a@x', tags: ['a', 'b'] });
    await nd.commit();
    expect(rows(nd.target)).toEqual([
      // an NDJSON row's values as an undo file writes them: FIELD:json, each cell the value's JSON (issue 28)
      ['_line', '_action', 'id', '_changes', 'email:json', 'tags:json'],
      ['1', 'unchanged', 'c_2', '', '"a@x"', '["a","b"]'],
    ]);
    const whole = await AmbiguousFile.create(fresh('amb.ndjson'), { format: 'ndjson', header: null });
    whole.add({ email: 'a@x', _line: 7 }, 1, ['c_1', 'c_2']);
    await whole.commit();
    expect(JSON.parse(readFileSync(whole.target, 'utf8'))).toEqual({
      _line: 1,
      _candidates: ['c_1', 'c_2'],
      email: 'a@x',
    });
  });
});
