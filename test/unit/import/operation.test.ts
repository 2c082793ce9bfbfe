// The request each row of a bulk update, delete or link becomes (src/import/operation.ts), as pure
// decisions: a row that cannot be sent is refused with a code naming why (MISSING_ID, EMPTY_ROW,
// INVALID_VALUE, UNKNOWN_FIELD) before anything is sent; a row that can is one request whose path holds
// the id as one encoded segment; a one-column file of ids is read as ids unless its line names a column.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { DEAL_CONTACT_TYPES } from '../../../src/api/resources.js';
import { UsageError } from '../../../src/http/errors.js';
import { normalizeFieldName, splitType } from '../../../src/import/input/header.js';
import {
  bareHeader,
  checkHeaderFields,
  choiceOf,
  deleteOperation,
  linkOperation,
  updateOperation,
  type RowPlan,
} from '../../../src/import/operation.js';
import { runs } from '../../helpers/property.js';

/** An id as a cell may hold it: any text with something besides blanks that is not `.` or `..` once trimmed. */
const goodId = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !['', '.', '..'].includes(s.trim()));
/** A cell that names no record. */
const noId = fc.constantFrom<unknown>(undefined, null, '', '   ', '\t', '.', '..', ' .. ', true, {}, []);
const fieldName = fc.string({ minLength: 1, maxLength: 10 }).filter((k) => k !== 'id' && k !== '__proto__');
const cell = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));

function request(plan: RowPlan) {
  expect(plan.ok, JSON.stringify(plan)).toBe(true);
  return (plan as Extract<RowPlan, { ok: true }>).request;
}
function refusal(plan: RowPlan) {
  expect(plan.ok, JSON.stringify(plan)).toBe(false);
  return plan as Extract<RowPlan, { ok: false }>;
}

describe('updateOperation', () => {
  const op = updateOperation('contacts');

  it('any row with an id and another field: PATCH /contacts/<id as one segment> with every other field, the record untouched', () => {
    fc.assert(
      fc.property(goodId, fc.dictionary(fieldName, cell, { minKeys: 1 }), (id, fields) => {
        const record: ApiRecord = { ...fields, id };
        const copy = structuredClone(record);
        const req = request(op.plan(record));
        expect(req.method).toBe('PATCH');
        expect(req.path).toBe(`/contacts/${encodeURIComponent(id.trim())}`);
        expect(req.path.split('/')).toHaveLength(3);
        expect(req.target).toBe(id.trim());
        expect(req.body).toEqual(fields);
        expect(record).toEqual(copy);
      }),
      runs(),
    );
  });

  it('a numeric id (NDJSON) is its digits', () => {
    expect(request(op.plan({ id: 42, first_name: 'A' })).path).toBe('/contacts/42');
  });

  it('a row without an id is MISSING_ID; one with only an id is EMPTY_ROW', () => {
    fc.assert(
      fc.property(noId, fc.dictionary(fieldName, cell), (id, fields) => {
        const r = refusal(op.plan({ ...fields, id: id }));
        expect(r).toMatchObject({ code: 'MISSING_ID', field: 'id' });
      }),
      runs(),
    );
    expect(refusal(op.plan({ id: 'con_1' }))).toMatchObject({ code: 'EMPTY_ROW' });
  });

  it('its identity and what it keeps', () => {
    expect(op).toMatchObject({
      kind: 'update',
      done: 'updated',
      describe: 'update contacts',
      required: ['id'],
      goneIsDone: false,
    });
    expect(op.bare).toBeUndefined();
    expect(op.keep).toEqual(expect.arrayContaining(['id', 'owner_id']));
  });
});

describe('deleteOperation', () => {
  const op = deleteOperation('deals');

  it('any row with an id: DELETE /deals/<id>, no body, the other cells not sent', () => {
    fc.assert(
      fc.property(goodId, fc.dictionary(fieldName, cell), (id, fields) => {
        const req = request(op.plan({ ...fields, id }));
        expect(req).toEqual({
          method: 'DELETE',
          path: `/deals/${encodeURIComponent(id.trim())}`,
          target: id.trim(),
          subject: id.trim(),
        });
      }),
      runs(),
    );
  });

  it('a row without an id is MISSING_ID; a 404 to one sent again counts as done; bare ids are ids', () => {
    fc.assert(
      fc.property(noId, (id) => {
        expect(refusal(op.plan({ id: id }))).toMatchObject({ code: 'MISSING_ID' });
      }),
      runs(100),
    );
    expect(op).toMatchObject({
      kind: 'delete',
      done: 'deleted',
      goneIsDone: true,
      bare: 'id',
      describe: 'delete deals',
    });
    expect(op.describe).not.toBe(updateOperation('deals').describe);
  });
});

/** A value spelled as a person might: any case, `_` as `-`, ` ` or `_`, blanks around. */
const spelled = (value: string) =>
  fc
    .tuple(
      fc.array(fc.boolean(), { minLength: value.length, maxLength: value.length }),
      fc.constantFrom('_', '-', ' ', ' - '),
      fc.constantFrom('', ' ', '  '),
    )
    .map(
      ([upper, sep, pad]) =>
        `${pad}${[...value]
          .map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase()))
          .join('')
          .replace(/_/g, sep)}${pad}`,
    );

describe('linkOperation', () => {
  it('deals contacts: a role in any case and spelling is the spec value; POST /deals/<deal_id>/contacts', () => {
    const op = linkOperation('deals', 'contacts');
    fc.assert(
      fc.property(
        fc.constantFrom(...DEAL_CONTACT_TYPES).chain((v) => fc.tuple(fc.constant(v), spelled(v))),
        goodId,
        goodId,
        ([value, typed], deal, contact) => {
          const req = request(op.plan({ deal_id: deal, contact_id: contact, type: typed }));
          expect(req).toEqual({
            method: 'POST',
            path: `/deals/${encodeURIComponent(deal.trim())}/contacts`,
            body: { contact_id: contact.trim(), type: value },
            target: deal.trim(),
            // a link's record is its parent and child, whatever its type
            subject: `${deal.trim()}\0${contact.trim()}`,
          });
        },
      ),
      runs(),
    );
  });

  it('an unknown role in any case is INVALID_VALUE naming the allowed ones', () => {
    const op = linkOperation('deals', 'contacts');
    fc.assert(
      fc.property(fc.string({ maxLength: 15 }), (role) => {
        fc.pre(choiceOf({ name: 'type', flag: 'type', values: DEAL_CONTACT_TYPES }, role) === undefined);
        const r = refusal(op.plan({ deal_id: 'deal_1', contact_id: 'con_1', type: role }));
        expect(r).toMatchObject({ code: 'INVALID_VALUE', field: 'type' });
        expect(r.reason).toContain('CHAMPION');
      }),
      runs(),
    );
    expect(refusal(op.plan({ deal_id: 'deal_1', contact_id: 'con_1', type: 'Champions' }))).toMatchObject({
      code: 'INVALID_VALUE',
    });
  });

  it('an unknown field is UNKNOWN_FIELD; a missing parent or child is MISSING_ID naming its column', () => {
    const op = linkOperation('deals', 'contacts');
    fc.assert(
      fc.property(
        fieldName.filter((k) => !['deal_id', 'contact_id', 'type', 'supervisor'].includes(k)),
        (k) => {
          expect(refusal(op.plan({ deal_id: 'deal_1', contact_id: 'con_1', [k]: 'x' }))).toMatchObject({
            code: 'UNKNOWN_FIELD',
            field: k,
          });
        },
      ),
      runs(),
    );
    expect(refusal(op.plan({ contact_id: 'con_1' }))).toMatchObject({ code: 'MISSING_ID', field: 'deal_id' });
    expect(refusal(op.plan({ deal_id: 'deal_1', contact_id: ' ' }))).toMatchObject({
      code: 'MISSING_ID',
      field: 'contact_id',
    });
  });

  it('a parent given for every row: the file holds only the children (bare), and a parent column is an unknown field', () => {
    const op = linkOperation('segments', 'members', 'seg 1');
    expect(op).toMatchObject({ required: ['contact_id'], bare: 'contact_id', describe: 'link segments members seg 1' });
    expect(request(op.plan({ contact_id: 'con_1' }))).toEqual({
      method: 'POST',
      path: '/segments/seg%201/members',
      body: { contact_id: 'con_1' },
      target: 'seg 1',
      subject: 'seg 1\0con_1',
    });
    expect(refusal(op.plan({ contact_id: 'con_1', segment_id: 'seg_2' }))).toMatchObject({ code: 'UNKNOWN_FIELD' });
    expect(linkOperation('segments', 'members').bare).toBeUndefined();
  });

  it('notes records: record_type defaults to contact, any case accepted; a 409 is not a 404 (goneIsDone false)', () => {
    const op = linkOperation('notes', 'records');
    expect(request(op.plan({ note_id: 'note_1', record_id: 'con_1' })).body).toEqual({
      record_id: 'con_1',
      record_type: 'contact',
    });
    expect(request(op.plan({ note_id: 'note_1', record_id: 'cmp_1', record_type: 'Company' })).body).toEqual({
      record_id: 'cmp_1',
      record_type: 'company',
    });
    expect(refusal(op.plan({ note_id: 'note_1', record_id: 'x', record_type: 'person' }))).toMatchObject({
      code: 'INVALID_VALUE',
      field: 'record_type',
    });
    expect(op.goneIsDone).toBe(false);
  });

  it('a meeting association is a PUT /meetings/<id>/deal with {deal_id}', () => {
    const op = linkOperation('meetings', 'deal');
    expect(op.required).toEqual(['meeting_id', 'deal_id']);
    expect(request(op.plan({ meeting_id: 'mtg_1', deal_id: 'deal_9' }))).toEqual({
      method: 'PUT',
      path: '/meetings/mtg_1/deal',
      body: { deal_id: 'deal_9' },
      target: 'mtg_1',
      subject: 'mtg_1',
    });
    expect(request(linkOperation('meetings', 'company', 'mtg_2').plan({ company_id: 'cmp_1' })).path).toBe(
      '/meetings/mtg_2/company',
    );
    expect(refusal(op.plan({ meeting_id: 'mtg_1', deal_id: 'deal_9', type: 'x' }))).toMatchObject({
      code: 'UNKNOWN_FIELD',
    });
  });

  it('an unknown link is a usage error', () => {
    expect(() => linkOperation('deals', 'tasks')).toThrow(UsageError);
    expect(() => linkOperation('nope', 'contacts')).toThrow(/unknown link 'nope contacts'/);
  });
});

describe('checkHeaderFields', () => {
  it('a file without the id column names it and --id-column; a link file with other columns names them', () => {
    expect(checkHeaderFields(updateOperation('contacts'), ['email'], 'f.csv')?.hint).toMatch(/--id-column/);
    expect(checkHeaderFields(updateOperation('contacts'), ['id', 'anything'], 'f.csv')).toBeUndefined();
    expect(checkHeaderFields(deleteOperation('contacts'), ['id'], 'f.csv')).toBeUndefined();
    const link = linkOperation('deals', 'contacts');
    expect(checkHeaderFields(link, ['deal_id'], 'f.csv')?.message).toMatch(/no "contact_id" column/);
    expect(checkHeaderFields(link, ['deal_id', 'contact_id', 'role'], 'f.csv')?.message).toMatch(
      /"role" is not a field of a deals contacts link/,
    );
    expect(checkHeaderFields(link, ['deal_id', 'contact_id', 'type', 'supervisor'], 'f.csv')).toBeUndefined();
  });
});

describe('bareHeader', () => {
  const noMaps = new Map<string, string>();

  it('only operations with a bare field detect bare files', () => {
    expect(bareHeader(undefined, noMaps)).toBeUndefined();
    expect(bareHeader(updateOperation('contacts'), noMaps)).toBeUndefined();
    expect(bareHeader(linkOperation('deals', 'contacts'), noMaps)).toBeUndefined();
  });

  it('one cell that is not the field, nor any `…id` name, a mapped column or a `_` column is an id: the file is read under [id]', () => {
    const detect = bareHeader(deleteOperation('contacts'), new Map([['Record ID', 'id']]))!;
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (first) => {
        const c = first.trim();
        const name = normalizeFieldName(splitType(c).name);
        const isName = c === '' || c.startsWith('_') || c === 'Record ID' || name === 'id' || name.endsWith('_id');
        expect(detect([first])).toEqual(isName ? undefined : ['id']);
      }),
      runs(),
    );
    for (const header of ['id', 'ID', ' Id ', 'id:string', 'Record ID', 'contact_id', 'Contact ID', '_line', '']) {
      expect(detect([header]), header).toBeUndefined();
    }
    for (const value of ['con_1', '42', 'contact idx']) expect(detect([value]), value).toEqual(['id']);
    // two or more cells are a header, whatever they hold
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 2, maxLength: 4 }), (cells) => {
        expect(detect(cells)).toBeUndefined();
      }),
      runs(100),
    );
  });

  it('a link with a parent for every row reads bare child ids', () => {
    const detect = bareHeader(linkOperation('segments', 'members', 'seg_1'), noMaps)!;
    expect(detect(['con_1'])).toEqual(['contact_id']);
    expect(detect(['Contact ID'])).toBeUndefined();
  });
});
