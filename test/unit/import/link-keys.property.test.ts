// Properties of `crm links import` by natural key (CONTRACT §7d, issue 30), its pure decisions (layout.ts):
// classifyRow never links a side that is not exactly one record, says which side was ambiguous or not found, is a
// duplicate exactly when an earlier row named the pair (a meeting: the meeting), and decides link/linked,
// remove/not_linked and set/unchanged/replace by what is there now alone; linkLayout and readRow read keys as §7b
// compares them (trimmed, an email field in any case, other fields in theirs), keep a compound key's parts apart,
// refuse a blank key cell (MISSING_KEY), an unknown column and a side named twice (UsageError), read a link's type in
// any spelling, follow --map, and take only a linked file's rows of its own parent and relation.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEAL_CONTACT_TYPES, isCaseFreeField } from '../../../src/api/resources.js';
import { UsageError } from '../../../src/http/errors.js';
import { parseColumnMaps } from '../../../src/import/input/header.js';
import {
  classifyRow,
  linkLayout,
  readRow,
  type Found,
  type LinkAction,
  type LinkLayout,
  type RowCells,
} from '../../../src/import/link-keys/layout.js';
import { runs } from '../../helpers/property.js';

const NO_MAPS = new Map<string, string>();
const layoutOf = (parent: string, relation: string, header: readonly string[], maps = NO_MAPS): LinkLayout =>
  linkLayout(parent, relation, header, maps, 'pairs.csv', true)!;
/** what linkLayout threw (undefined when it returned) */
const thrown = (f: () => unknown): unknown => {
  try {
    f();
    return undefined;
  } catch (err) {
    return err;
  }
};
const okRow = (r: RowCells): Extract<RowCells, { ok: true }> => {
  expect(r, JSON.stringify(r)).toMatchObject({ ok: true });
  return r as Extract<RowCells, { ok: true }>;
};
const keyOf = (side: { key: string } | { id: string }): string => ('key' in side ? side.key : `id:${side.id}`);

/** the spaces String#trim takes off (a key is compared trimmed) */
const pad = fc.string({ unit: fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u3000', '\ufeff'), maxLength: 3 });
/** key text, with characters a compound key's encoding could trip on */
const text = fc
  .string({
    unit: fc.constantFrom('a', 'B', 'z', 'Q', 'é', '@', '.', ',', '"', '\\', '[', ']', ';', ' ', '1', '-', '\u0000'),
    minLength: 1,
    maxLength: 8,
  })
  .filter((s) => s.trim() !== '');
const flipCase = (s: string, flips: readonly boolean[]): string =>
  Array.from(s, (c, i) => (flips[i % Math.max(1, flips.length)] ? c.toUpperCase() : c.toLowerCase())).join('');
/** §7b: trimmed; an email field in any case (and, beyond it, a domain) */
const norm = (field: string, v: string): string => (isCaseFreeField(field) ? v.trim().toLowerCase() : v.trim());

// ---- classifyRow ----

const ID = fc.constantFrom('p1', 'p2', 'c1', 'c2', 'x 1', '');
const found: fc.Arbitrary<Found> = fc.oneof(
  fc.constant(undefined),
  ID.map((id) => ({ id })),
  fc.uniqueArray(ID, { minLength: 2, maxLength: 4 }).map((ids) => ({ ids })),
);
const side = (name: string) => fc.record({ side: fc.constant(name), key: fc.option(text, { nil: undefined }), found });

/** the actions that say a pair is known: each needs both sides to be exactly one record */
const PAIRED = ['link', 'linked', 'remove', 'not_linked', 'set', 'replace', 'unchanged', 'duplicate'];

describe('classifyRow', () => {
  const anyRow = fc.record({
    remove: fc.boolean(),
    association: fc.boolean(),
    parent: side('deal'),
    child: side('contact'),
    now: fc.oneof(fc.boolean(), fc.constant(null), ID),
    earlier: fc.option(fc.integer({ min: 2, max: 99 }), { nil: undefined }),
  });

  it('never a guess: a pair only when both sides are exactly one record; else the first side that is not, named', () => {
    fc.assert(
      fc.property(anyRow, (o) => {
        const asked: Array<[string, string]> = [];
        const act = classifyRow({
          ...o,
          current: (p, c) => (asked.push([p, c]), o.now),
          earlierLine: (p, c) => (asked.push([p, c]), o.earlier),
        });
        const one = (f: Found) => f !== undefined && 'id' in f;
        const bothOne = one(o.parent.found) && one(o.child.found);
        expect(PAIRED.includes(act.action)).toBe(bothOne);
        if (bothOne) {
          const [p, c] = [(o.parent.found as { id: string }).id, (o.child.found as { id: string }).id];
          if ('parentId' in act) expect([act.parentId, act.childId]).toEqual([p, c]);
          // only the resolved pair is ever looked up
          for (const pair of asked) expect(pair).toEqual([p, c]);
          return;
        }
        expect(asked).toEqual([]);
        // the first side (parent, then child) that is not exactly one record decides, and is named
        const first = one(o.parent.found) ? o.child : o.parent;
        if (first.found === undefined)
          expect(act).toEqual({ action: 'not_found', side: first.side, key: first.key ?? '' });
        else
          expect(act).toEqual({
            action: 'ambiguous',
            side: first.side,
            candidates: (first.found as { ids: string[] }).ids,
          });
      }),
      runs(1000),
    );
  });

  it('ambiguous whenever a side has two or more candidates and neither is without a record; not_found when one has none', () => {
    fc.assert(
      fc.property(anyRow, (o) => {
        const act = classifyRow({ ...o, current: () => o.now, earlierLine: () => o.earlier });
        const sides = [o.parent, o.child];
        const none = sides.filter((s) => s.found === undefined);
        const many = sides.filter((s) => s.found !== undefined && 'ids' in s.found);
        if (none.length === 0 && many.length > 0) {
          expect(act.action).toBe('ambiguous');
          const a = act as Extract<LinkAction, { action: 'ambiguous' }>;
          expect(a.candidates.length).toBeGreaterThanOrEqual(2);
          expect(many.map((s) => s.side)).toContain(a.side);
        }
        if (many.length === 0 && none.length > 0) {
          expect(act.action).toBe('not_found');
          expect(none.map((s) => s.side)).toContain((act as { side: string }).side);
        }
      }),
      runs(),
    );
  });

  const resolved = fc.record({
    remove: fc.boolean(),
    parentId: ID,
    childId: ID,
    linkedNow: fc.boolean(),
    earlier: fc.option(fc.integer({ min: 2, max: 99 }), { nil: undefined }),
  });
  const decide = (
    o: { remove: boolean; parentId: string; childId: string; earlier?: number },
    association: boolean,
    current: (p: string, c: string) => boolean | string | null,
  ) =>
    classifyRow({
      remove: o.remove,
      association,
      parent: { side: association ? 'meeting' : 'deal', found: { id: o.parentId } },
      child: { side: association ? 'deal' : 'contact', found: { id: o.childId } },
      current,
      earlierLine: () => o.earlier,
    });

  it('links: duplicate iff an earlier row named the pair; else link/linked (remove/not_linked) by `current` alone', () => {
    fc.assert(
      fc.property(resolved, fc.func(fc.boolean()), (o, elsewhere) => {
        // what is linked between other pairs does not matter: only the row's own pair is read
        const current = (p: string, c: string) => (p === o.parentId && c === o.childId ? o.linkedNow : elsewhere(p, c));
        const act = decide(o, false, current);
        if (o.earlier !== undefined) return void expect(act).toEqual({ action: 'duplicate', earlier: o.earlier });
        const [yes, no] = o.remove ? ['remove', 'not_linked'] : ['linked', 'link'];
        expect(act).toEqual({ action: o.linkedNow ? yes : no, parentId: o.parentId, childId: o.childId });
      }),
      runs(),
    );
  });

  it('meetings: unchanged iff the association is the child, set when none, replace (with the one before) otherwise', () => {
    fc.assert(
      fc.property(resolved, fc.oneof(fc.constant(null), ID), (o, now) => {
        const act = decide(o, true, () => now);
        if (o.earlier !== undefined) return void expect(act).toEqual({ action: 'duplicate', earlier: o.earlier });
        const ids = { parentId: o.parentId, childId: o.childId };
        if (o.remove) expect(act).toEqual({ action: now === o.childId ? 'remove' : 'not_linked', ...ids });
        else if (now === o.childId) expect(act).toEqual({ action: 'unchanged', ...ids });
        else if (now === null) expect(act).toEqual({ action: 'set', ...ids, before: null });
        else expect(act).toEqual({ action: 'replace', ...ids, before: now });
      }),
      runs(),
    );
  });

  it('over a file: duplicate exactly for a row whose pair (a meeting: whose meeting) an earlier row named', () => {
    const pool = (ids: string[]): fc.Arbitrary<Found> =>
      fc.oneof(
        { weight: 1, arbitrary: fc.constant(undefined) },
        { weight: 4, arbitrary: fc.constantFrom(...ids).map((id) => ({ id })) },
        { weight: 1, arbitrary: fc.constant({ ids: ids.slice(0, 2) }) },
      );
    const row = fc.record({ parent: pool(['p1', 'p2', 'p3']), child: pool(['c1', 'c2']), now: fc.boolean() });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 12 }), fc.boolean(), fc.boolean(), (rows, association, remove) => {
        // the file's pass as planRows makes it: the first line naming each pair (a meeting's: each meeting)
        const first = new Map<string, number>();
        const acts = rows.map((r, i) =>
          classifyRow({
            remove,
            association,
            parent: { side: 'p', found: r.parent },
            child: { side: 'c', found: r.child },
            current: () => (association ? (r.now ? 'c1' : null) : r.now),
            earlierLine: (p, c) => {
              const k = association ? p : `${p}\0${c}`;
              const at = first.get(k);
              if (at === undefined) first.set(k, i + 2);
              return at;
            },
          }),
        );
        const one = (f: Found) => (f !== undefined && 'id' in f ? f.id : undefined);
        rows.forEach((r, i) => {
          const [p, c] = [one(r.parent), one(r.child)];
          if (p === undefined || c === undefined) return void expect(acts[i]!.action).not.toBe('duplicate');
          const same = (q: (typeof rows)[number]) => one(q.parent) === p && (association || one(q.child) === c);
          const at = rows.slice(0, i).findIndex((q) => one(q.child) !== undefined && same(q));
          expect(acts[i]).toEqual(
            at < 0 ? expect.not.objectContaining({ action: 'duplicate' }) : { action: 'duplicate', earlier: at + 2 },
          );
        });
      }),
      runs(),
    );
  });
});

// ---- linkLayout and readRow ----

/** key fields of each side of `deals contacts` a file may use (distinct fields; emails and not) */
const DEAL_FIELDS = ['name', 'stage', 'work_email'] as const;
const CONTACT_FIELDS = ['email', 'first_name', 'last_name'] as const;
/** how a header may spell `side.field` */
const spelling = (s: string, f: string, how: number): string =>
  [`${s}.${f}`, `${s[0]!.toUpperCase()}${s.slice(1)}.${f}`, ` ${s.toUpperCase()}.${f.toUpperCase()} `][how % 3]!;

/** a deals-contacts header keying each side by one or two fields, in any column order */
const keyedHeader = fc
  .record({
    deal: fc.subarray([...DEAL_FIELDS], { minLength: 1, maxLength: 2 }),
    contact: fc.subarray([...CONTACT_FIELDS], { minLength: 1, maxLength: 2 }),
    how: fc.nat(),
  })
  .chain(({ deal, contact, how }) => {
    const cols = [...deal.map((f) => ['deal', f] as const), ...contact.map((f) => ['contact', f] as const)];
    return fc.shuffledSubarray(cols, { minLength: cols.length }).map((order) => ({
      cols: order,
      header: order.map(([s, f], i) => spelling(s, f, how + i)),
    }));
  });

describe('readRow: keys as §7b compares them', () => {
  it('cells that differ only by surrounding spaces (and, in an email field, case) give the same key', () => {
    fc.assert(
      fc.property(
        keyedHeader,
        fc.array(fc.tuple(text, pad, pad, fc.array(fc.boolean(), { maxLength: 4 })), { minLength: 4, maxLength: 4 }),
        ({ cols, header }, cells) => {
          const layout = layoutOf('deals', 'contacts', header);
          const plain = cols.map((_, i) => cells[i]![0]);
          const varied = cols.map(([, f], i) => {
            const [v, before, after, flips] = cells[i]!;
            return `${before}${isCaseFreeField(f) ? flipCase(v, flips) : v}${after}`;
          });
          const [a, b] = [okRow(readRow(layout, plain)), okRow(readRow(layout, varied))];
          expect(keyOf(b.parent)).toBe(keyOf(a.parent));
          expect(keyOf(b.child)).toBe(keyOf(a.child));
          expect([a.parent, a.child].map((s) => (s as { resource: string }).resource)).toEqual(['deals', 'contacts']);
        },
      ),
      runs(),
    );
  });

  it('keys are equal exactly when every part is, trimmed (emails in any case, other fields in theirs)', () => {
    fc.assert(
      fc.property(
        keyedHeader,
        fc.array(fc.tuple(text, text, fc.boolean(), fc.array(fc.boolean(), { maxLength: 4 })), {
          minLength: 4,
          maxLength: 4,
        }),
        ({ cols, header }, cells) => {
          const layout = layoutOf('deals', 'contacts', header);
          // each cell of row b: the same text in another case, or another text
          const a = cols.map((_, i) => cells[i]![0]);
          const b = cols.map((_, i) => {
            const [v, other, same, flips] = cells[i]!;
            return same ? flipCase(v, flips) : other;
          });
          const [ra, rb] = [okRow(readRow(layout, a)), okRow(readRow(layout, b))];
          for (const s of ['deal', 'contact'] as const) {
            const at = cols.flatMap(([side, f], i) => (side === s ? [[f, i] as const] : []));
            const equal = at.every(([f, i]) => norm(f, a[i]!) === norm(f, b[i]!));
            const [ka, kb] = s === 'deal' ? [ra.parent, rb.parent] : [ra.child, rb.child];
            expect(keyOf(ka) === keyOf(kb), `${s}: ${JSON.stringify([a, b])}`).toBe(equal);
          }
        },
      ),
      runs(),
    );
  });

  it('a compound key keeps its parts apart: ["a,b","c"] is not ["a","b,c"], whatever the parts hold', () => {
    const layout = layoutOf('segments', 'members', ['segment.name', 'contact.first_name', 'contact.last_name']);
    const child = (cells: string[]) => keyOf(okRow(readRow(layout, ['VIP', ...cells])).child);
    expect(child(['a,b', 'c'])).not.toBe(child(['a', 'b,c']));
    expect(child(['a"', 'b'])).not.toBe(child(['a', '"b']));
    expect(child(['a', 'b'])).toBe(child([' a ', 'b\t']));
    const piece = fc.string({ unit: fc.constantFrom('a', ',', '"', '\\', '[', ']', ';', '\u0000', ' '), maxLength: 4 });
    fc.assert(
      fc.property(piece, piece, piece, (x, y, z) => {
        // a piece moved from the end of one part to the start of the next
        const [a, b] = [
          [`x${x}${y}`, `${z}y`],
          [`x${x}`, `${y}${z}y`],
        ];
        expect(child(a) === child(b)).toBe(
          norm('first_name', a[0]!) === norm('first_name', b[0]!) &&
            norm('last_name', a[1]!) === norm('last_name', b[1]!),
        );
      }),
      runs(),
    );
  });

  it('a blank key cell is invalid, MISSING_KEY naming its column; a blank id likewise', () => {
    fc.assert(
      fc.property(keyedHeader, fc.array(text, { minLength: 4, maxLength: 4 }), fc.nat(), pad, (h, values, n, blank) => {
        const { cols, header } = h;
        const layout = layoutOf('deals', 'contacts', header);
        const at = n % cols.length;
        const cells = cols.map((_, i) => (i === at ? blank : values[i]!));
        const r = readRow(layout, cells);
        const named = `${cols[at]![0]}.${cols[at]![1]}`;
        expect(r).toMatchObject({ ok: false, code: 'MISSING_KEY' });
        const bad = r as { field: string; reason: string };
        expect(bad.field.split(', ')).toContain(named);
        expect(bad.reason).toContain(named);
      }),
      runs(),
    );
    const byId = layoutOf('deals', 'contacts', ['deal_id', 'contact.email']);
    for (const id of ['', '  ', '.', '..'])
      expect(readRow(byId, [id, 'a@x.io'])).toMatchObject({ ok: false, code: 'MISSING_KEY', field: "deal's id" });
  });

  it('a key field named __proto__ (or constructor, toString), its cell holding text, is a key, never MISSING_KEY', () => {
    // a field named exactly (`contact."__proto__"`) as an export writes it; the records read keep such a field as
    // their own (set-own.ts), so the row must too
    fc.assert(
      fc.property(fc.constantFrom('__proto__', 'constructor', 'toString'), text, (field, value) => {
        const layout = layoutOf('deals', 'contacts', ['deal.name', `contact.${JSON.stringify(field)}`]);
        expect(layout.childSide.key?.fields).toEqual([field]);
        const r = okRow(readRow(layout, ['Acme', value]));
        expect(keyOf(r.child)).toBe(value.trim());
      }),
      runs(50),
    );
  });

  it('two columns naming one key field are refused (as batch refuses them), never one silently dropped from the key', () => {
    // `contact.email` and `Contact.Email` both fill contact.email: the later column silently wins, so rows naming
    // different contacts in the first column get one key, and a row's first cell is never read
    const same = fc.constantFrom(
      ['contact.email', 'Contact.Email'],
      ['contact.email', ' CONTACT.EMAIL '],
      ['contact.first_name', 'contact.First Name'],
    );
    fc.assert(
      fc.property(same, text, text, text, (cols, x, y, z) => {
        const header = ['deal.name', ...cols];
        const err = thrown(() => layoutOf('deals', 'contacts', header));
        if (err !== undefined) {
          expect(err).toBeInstanceOf(UsageError);
          return;
        }
        const layout = layoutOf('deals', 'contacts', header);
        const f = cols[0].includes('email') ? 'email' : 'first_name';
        const [a, b] = [okRow(readRow(layout, ['Acme', x, z])), okRow(readRow(layout, ['Acme', y, z]))];
        expect(keyOf(a.child) === keyOf(b.child), JSON.stringify([x, y, z])).toBe(norm(f, x) === norm(f, y));
      }),
      runs(100),
    );
  });
});

describe('readRow: a link type in any spelling', () => {
  /** `DECISION_MAKER` as a person may write it: any case, `-`, spaces or `_` between the words, padded */
  const spelled = (v: string) =>
    fc
      .tuple(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
        fc.array(fc.constantFrom('-', '_', ' ', '--', ' - '), { minLength: 3, maxLength: 3 }),
        pad,
        pad,
      )
      .map(([flips, seps, before, after]) => {
        const words = v.split('_').map((w) => flipCase(w, flips));
        return before + words.map((w, i) => (i === 0 ? w : seps[(i - 1) % 3]! + w)).join('') + after;
      });
  const layout = layoutOf('deals', 'contacts', ['deal.name', 'contact.email', 'Type']);
  const want = (t: string) =>
    t
      .trim()
      .replace(/[-\s]+/g, '_')
      .toUpperCase();

  it('maps to the enum value', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DEAL_CONTACT_TYPES).chain((v) => spelled(v).map((s) => [v, s] as const)),
        ([v, s]) => {
          expect(okRow(readRow(layout, ['Acme', 'a@x.io', s])).extras).toEqual({ type: v });
        },
      ),
      runs(),
    );
    expect(okRow(readRow(layout, ['Acme', 'a@x.io', ' '])).extras).toEqual({});
  });

  it('anything else is INVALID_VALUE naming the field and the value', () => {
    const other = fc
      .string({ unit: fc.constantFrom('a', 'E', 'r', 'o', 'x', '-', ' ', '_', '1', 'é'), minLength: 1, maxLength: 12 })
      .filter((s) => s.trim() !== '' && !DEAL_CONTACT_TYPES.includes(want(s)));
    fc.assert(
      fc.property(other, (s) => {
        const r = readRow(layout, ['Acme', 'a@x.io', s]);
        expect(r).toMatchObject({ ok: false, code: 'INVALID_VALUE', field: 'type' });
        expect((r as { reason: string }).reason).toContain(JSON.stringify(s.trim()));
      }),
      runs(),
    );
    for (const s of ['PRIMARY_', 'decision maker!', 'CHAMPIONS', 'end__user'])
      expect(readRow(layout, ['Acme', 'a@x.io', s])).toMatchObject({ ok: false, code: 'INVALID_VALUE' });
  });

  it("notes' records: record_type in any case chooses the collection the key is read in (default contact)", () => {
    const notes = layoutOf('notes', 'records', ['note.title', 'record.name', 'Record Type']);
    const cases: Array<[string, string, string]> = [
      ['', 'contact', 'contacts'],
      [' Company ', 'company', 'companies'],
      ['DEAL', 'deal', 'deals'],
    ];
    for (const [cell, kind, resource] of cases) {
      const r = okRow(readRow(notes, ['Call', 'Acme', cell]));
      expect(r.extras).toEqual({ record_type: kind });
      expect(r.child).toEqual({ key: 'Acme', resource });
    }
    expect(readRow(notes, ['Call', 'Acme', 'person'])).toMatchObject({ code: 'INVALID_VALUE', field: 'record_type' });
  });
});

describe('linkLayout: the header', () => {
  const columnName = fc
    .string({ unit: fc.constantFrom('D', 'e', 'a', 'l', ' ', '#', 'é', '.', '1', '_'), minLength: 1, maxLength: 10 })
    .filter((s) => s.trim() !== '' && !s.trim().startsWith('_') && !s.includes('='));

  it('--map renames headers: a mapped file reads as the one written with the sides’ names', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(columnName, { minLength: 3, maxLength: 3, selector: (s) => s.trim() }),
        pad,
        fc.array(text, { minLength: 3, maxLength: 3 }),
        (names, space, cells) => {
          const [dealCol, emailCol, dropped] = [names[0]!, names[1]!, names[2]!];
          const maps = parseColumnMaps([`${dealCol}=deal.name`, `${emailCol}=contact.email`, `${dropped}=`]);
          // the header as written, padded: each map still finds its column
          const mapped = layoutOf('deals', 'contacts', [emailCol + space, dropped, space + dealCol], maps);
          const plain = layoutOf(
            'deals',
            'contacts',
            ['contact.email', 'notes_x', 'deal.name'],
            new Map([['notes_x', '']]),
          );
          expect(mapped.parentSide).toEqual(plain.parentSide);
          expect(mapped.childSide).toEqual(plain.childSide);
          const row = [cells[0]!, cells[1]!, cells[2]!];
          expect(readRow(mapped, row)).toEqual(readRow(plain, row));
        },
      ),
      runs(),
    );
  });

  it('a column naming no side is a UsageError naming it', () => {
    const unknown = fc.oneof(
      columnName.map((s) => `zz${s}`),
      fc.constantFrom('person.email', 'company.domain', 'deals.name', 'contacts.email', 'parent_id', 'child_id'),
    );
    fc.assert(
      fc.property(keyedHeader, unknown, fc.nat(), ({ header }, extra, at) => {
        const cells = [...header];
        cells.splice(at % (cells.length + 1), 0, extra);
        const err = thrown(() => layoutOf('deals', 'contacts', cells));
        expect(err).toBeInstanceOf(UsageError);
        expect((err as Error).message).toContain(JSON.stringify(extra));
      }),
      runs(),
    );
    // `_` columns are crm's own: left out, never refused
    expect(layoutOf('deals', 'contacts', ['deal.name', '_line', 'contact.email']).childSide.key?.columns).toEqual([2]);
  });

  it('a side named both by id and by key columns: a row with an id is named by it, one without by its key', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(['deal', 'deal_id'] as const, ['contact', 'contact_id'] as const),
        fc.constantFrom('', ' ', 'deal_9', ' con_7 '),
        fc.nat(),
        ([name, idCol], id, at) => {
          const header = ['deal.name', 'contact.email'];
          const cells = [...header];
          const where = at % (cells.length + 1);
          cells.splice(where, 0, idCol);
          const layout = layoutOf('deals', 'contacts', cells);
          const row = ['LK Deal', 'lk@example.test'];
          row.splice(where, 0, id);
          const read = readRow(layout, row);
          expect(read).toMatchObject({ ok: true });
          const side = name === 'deal' ? (read as { parent: unknown }).parent : (read as { child: unknown }).child;
          if (id.trim() === '') expect(side).toHaveProperty('key');
          else expect(side).toEqual({ id: id.trim() });
        },
      ),
      runs(),
    );
  });

  it("a linked file takes only its rows of the layout's parent and relation (links and a meeting's)", () => {
    const parents = fc.constantFrom('deals', ' deals ', 'Deals', 'notes', 'meetings', '');
    const relations = fc.constantFrom('contacts', 'contacts ', 'companies', 'records', 'deal', '');
    const cols = ['parent', 'parent_id', 'relation', 'child_id', 'type'];
    fc.assert(
      fc.property(
        fc.shuffledSubarray(cols, { minLength: cols.length }),
        fc.array(
          fc.tuple(parents, relations, fc.constantFrom('deal_1', ' deal_2 '), fc.constantFrom('con_1', 'con_2')),
          {
            maxLength: 8,
          },
        ),
        (order, rows) => {
          const layout = layoutOf('deals', 'contacts', order);
          expect(layout.linkedFile).toBeDefined();
          for (const [p, r, pid, cid] of rows) {
            const byName: Record<string, string> = { parent: p, relation: r, parent_id: pid, child_id: cid, type: '' };
            const read = readRow(
              layout,
              order.map((c) => byName[c]!),
            );
            if (p.trim() !== 'deals' || r.trim() !== 'contacts') expect(read).toEqual({ skip: true });
            else expect(okRow(read)).toMatchObject({ parent: { id: pid.trim() }, child: { id: cid.trim() } });
          }
        },
      ),
      runs(),
    );
    const meetings = layoutOf('meetings', 'deal', ['parent', 'parent_id', 'relation', 'child_id', 'before_id']);
    expect(readRow(meetings, ['meetings', 'mtg_1', 'deal', 'deal_2', ' deal_1 '])).toMatchObject({
      ok: true,
      parent: { id: 'mtg_1' },
      child: { id: 'deal_2' },
      before: 'deal_1',
    });
    expect(readRow(meetings, ['meetings', 'mtg_1', 'company', 'cmp_2', ''])).toEqual({ skip: true });
    expect(readRow(meetings, ['deals', 'deal_1', 'contacts', 'con_1', ''])).toEqual({ skip: true });
  });
});
