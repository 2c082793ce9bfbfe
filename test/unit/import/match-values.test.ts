// What a reconcile compares is what it sends (issue 28): a text cell read as the type the record holds (an exported
// object or list is that object or list, a number beyond a double is that number), text sent trimmed as it was
// compared, and a create typed by what other records hold only when the text is how JSON writes the value.
import { describe, expect, it } from 'vitest';
import { RawNumber } from '../../../src/json/exact-json.js';
import { diffRecord, valueToSend } from '../../../src/import/match/classify.js';

describe('a row against the record it matched', () => {
  it('an exported object or list cell is that object or list: unchanged when equal, sent as one when not', () => {
    const held = { address: { city: 'Paris', zip: '00501' }, tags: ['vip', 'a'] };
    expect(diffRecord({ address: '{"zip":"00501","city":"Paris"}', tags: '["vip","a"]' }, held, [])).toEqual([]);
    expect(diffRecord({ tags: '["vip"]' }, held, [])).toEqual([
      { field: 'tags', before: ['vip', 'a'], after: ['vip'] },
    ]);
    // not the record's kind (a list for an object), or not JSON: text, as written
    expect(diffRecord({ address: '[1]' }, held, [])[0]!.after).toBe('[1]');
    expect(diffRecord({ address: '{city' }, held, [])[0]!.after).toBe('{city');
  });

  it('numbers beyond a double: equal by their digits, and a change to a number is sent as a number', () => {
    const big = new RawNumber('12345678901234567890123');
    expect(diffRecord({ n: '12345678901234567890123' }, { n: big }, [])).toEqual([]);
    expect(diffRecord({ n: '1' }, { n: big }, [])).toEqual([{ field: 'n', before: big, after: 1 }]);
    const sent = diffRecord({ n: '12345678901234567890124' }, { n: 5 }, [])[0]!.after;
    expect(sent).toBeInstanceOf(RawNumber);
    expect((sent as RawNumber).text).toBe('12345678901234567890124');
  });

  it('text is compared trimmed, so it is sent trimmed', () => {
    expect(diffRecord({ title: '  CTO ' }, { title: 'CTO' }, [])).toEqual([]);
    expect(diffRecord({ title: ' CEO ' }, { title: 'CTO' }, [])[0]!.after).toBe('CEO');
    expect(valueToSend(' ada@x.test ', undefined, true)).toBe('ada@x.test');
  });
});

describe('a create typed by what other records hold', () => {
  it('only text written as JSON writes the value: 00501 stays text, 37 is a number', () => {
    expect(valueToSend('00501', 0, true)).toBe('00501');
    expect(valueToSend('1.50', 0, true)).toBe('1.50');
    expect(valueToSend('37', 0, true)).toBe(37);
    expect(valueToSend('-0.5', 0, true)).toBe(-0.5);
    expect(valueToSend('false', false, true)).toBe(false);
    expect(valueToSend('{"a":1}', {}, true)).toEqual({ a: 1 });
    expect(valueToSend('["x"]', [], true)).toEqual(['x']);
  });

  it('an update is typed by its own record: 00501 for a record holding a number is that number', () => {
    expect(valueToSend('00501', 7)).toBe(501);
  });
});

describe('a typed value (a :json column, an undo file, NDJSON) is compared and sent exactly', () => {
  const exact = () => false;
  it.each([
    ['note', ' x ', 'y'],
    ['zip', '', 'z'],
    ['tags', '00501', 5],
    ['big', '12345678901234567890123', 1],
  ] as const)('%s: %j over %j', (field, value, held) => {
    expect(diffRecord({ [field]: value }, { [field]: held }, [], exact)).toEqual([
      { field, before: held, after: value },
    ]);
    expect(diffRecord({ [field]: value }, { [field]: value }, [], exact)).toEqual([]);
  });
});
