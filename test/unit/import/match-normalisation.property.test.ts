// Issue 28 (finding 9 of the trial): a reconcile matches keys in any Unicode normalisation, but compares values by
// their code points. A file's `José` in NFC where the record holds it in NFD is a change the file asks for: planned
// as an update that sends the file's code points; the same code points are unchanged; and the key, in NFC in one
// and NFD in the other, still finds the one record.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classify } from '../../../src/import/match/classify.js';
import { matchKey } from '../../../src/import/match/key.js';
import { RecordIndexBuilder } from '../../../src/import/match/record-index.js';
import { runs } from '../../helpers/property.js';
import { tempDir } from '../../helpers/temp.js';

/** a letter and combining marks (a precomposed form exists for most), or a Hangul syllable: NFC and NFD differ */
const combined = fc.constantFrom(
  'e\u0301',
  'a\u0308',
  'o\u0302',
  'A\u030a',
  'n\u0303',
  'c\u0327',
  's\u0323\u0307',
  '\ud55c',
);
const plain = fc.string({ unit: fc.constantFrom('J', 'x', 's', ' ', '-', '1', '\u00e9', 'e\u0301'), maxLength: 4 });
/** text with at least one character whose NFC and NFD spellings differ */
const accented = fc.tuple(plain, combined, plain).map((parts) => parts.join(''));
const local = fc.string({ unit: fc.constantFrom('a', 'b', '.', '1'), minLength: 1, maxLength: 4 });
const email = fc.tuple(local, accented).map(([l, a]) => `${l}.${a.replaceAll(' ', '')}@x.test`);

const SKIP = ['email', 'id'];
const forms = ['NFC', 'NFD'] as const;

describe('a reconcile: keys match in any normalisation, values compare by code points', () => {
  it('a value in NFC against the same in NFD (either way) is an update sending the file’s code points', () => {
    fc.assert(
      fc.property(accented, fc.constantFrom(...forms), fc.boolean(), (name, fileForm, typed) => {
        const [file, held] = [name.normalize(fileForm), name.normalize(fileForm === 'NFC' ? 'NFD' : 'NFC')];
        const record = { email: 'ada@x.test', first_name: held };
        // an untyped CSV cell (trimmed, read as the record's type) or a typed value (`:json`, NDJSON): the same rule
        const got = classify({ email: 'ada@x.test', first_name: file }, [{ id: 'c_1', record }], SKIP, () => !typed);
        const sent = typed ? file : file.trim(); // a text cell is sent trimmed, a typed value as it is
        expect(got).toEqual({
          action: 'update',
          id: 'c_1',
          changes: [{ field: 'first_name', before: held, after: sent }],
        });
        // the code points sent are the file's, not a normalised spelling
        const after = got.changes[0]!.after as string;
        expect(Array.from(after, (c) => c.codePointAt(0))).toEqual(Array.from(sent, (c) => c.codePointAt(0)));
      }),
      runs(),
    );
  });

  it('the identical string is unchanged, in either form, padded or not in an untyped cell', () => {
    fc.assert(
      fc.property(accented, fc.constantFrom(...forms), fc.constantFrom('', ' ', '\t'), (name, form, pad) => {
        const value = name.normalize(form);
        const record = { email: 'ada@x.test', first_name: value };
        const row = { email: 'ada@x.test', first_name: `${pad}${value}${pad}` };
        expect(classify(row, [{ id: 'c_1', record }], SKIP)).toEqual({ action: 'unchanged', id: 'c_1', changes: [] });
        expect(classify({ ...row, first_name: value }, [{ id: 'c_1', record }], SKIP, () => false)).toEqual({
          action: 'unchanged',
          id: 'c_1',
          changes: [],
        });
      }),
      runs(),
    );
  });

  it('a key in NFC and in NFD finds the one record holding it, and that record is then compared by code points', () => {
    const dir = tempDir('crm-match-nfc-');
    fc.assert(
      fc.property(email, accented, fc.constantFrom(...forms), (key, name, fileForm) => {
        const heldForm = fileForm === 'NFC' ? 'NFD' : 'NFC';
        const rowKey = matchKey(['email'], { email: key.normalize(fileForm) })!;
        const index = new RecordIndexBuilder(['email'], ['first_name'], (k) => k === rowKey, dir);
        try {
          index.add({ id: 'c_other', email: `other.${key}`, first_name: name });
          index.add({ id: 'c_1', email: key.normalize(heldForm), first_name: name.normalize(heldForm) });
          const entry = index.get(rowKey);
          expect(entry).toEqual({
            one: { id: 'c_1', record: { email: key.normalize(heldForm), first_name: name.normalize(heldForm) } },
          });
          const row = { email: key.normalize(fileForm), first_name: name.normalize(fileForm) };
          const got = classify(row, entry && 'one' in entry ? [entry.one] : [], SKIP);
          // the key's own field is never sent: only the value's spelling is a change
          expect(got.action).toBe('update');
          expect(got.changes.map((c) => c.field)).toEqual(['first_name']);
        } finally {
          index.close();
        }
      }),
      runs(100),
    );
  });
});
