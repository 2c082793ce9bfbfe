// "did you mean": the nearest name within a small edit distance, never a far one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RESOURCE_NAMES } from '../../../src/api/resources.js';
import { fsReason, isDiskError } from '../../../src/util/fs-error.js';
import { editDistance, nearestName } from '../../../src/util/nearest.js';
import { runs } from '../../helpers/property.js';

describe('nearestName', () => {
  it('suggests the resource a typo meant', () => {
    expect(nearestName('contact', RESOURCE_NAMES)).toBe('contacts');
    expect(nearestName('Contacts', RESOURCE_NAMES)).toBe('contacts');
    expect(nearestName('compnaies', RESOURCE_NAMES)).toBe('companies');
    expect(nearestName('deal', RESOURCE_NAMES)).toBe('deals');
    expect(nearestName('people', RESOURCE_NAMES)).toBeUndefined();
    expect(nearestName('x', RESOURCE_NAMES)).toBeUndefined();
  });
  it('a name with one letter dropped finds its name; the distance is symmetric and 0 only for equal words', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RESOURCE_NAMES), fc.nat(), (name, at) => {
        const i = at % name.length;
        expect(nearestName(name.slice(0, i) + name.slice(i + 1), RESOURCE_NAMES)).toBe(name);
      }),
      runs(),
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), (a, b) => {
        expect(editDistance(a, b)).toBe(editDistance(b, a));
        expect(editDistance(a, b) === 0).toBe(a === b);
      }),
      runs(),
    );
  });
});

describe('fsReason', () => {
  it('says what went wrong without the syscall and path', () => {
    const e = (code: string) => Object.assign(new Error(`${code}: x, stat 'f'`), { code });
    expect(fsReason(e('ENOENT'))).toBe('no such file');
    expect(fsReason(e('ENOSPC'))).toBe('the disk is full');
    expect(fsReason(e('EWHAT'))).toBe("EWHAT: x, stat 'f'");
    expect(isDiskError(e('EDQUOT'))).toBe(true);
    expect(isDiskError(e('ENOENT'))).toBe(false);
  });
});
