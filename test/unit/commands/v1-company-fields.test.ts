import { describe, expect, it } from 'vitest';
import { checkCompanyUpdate, companyUpdateProblems } from '../../../src/commands/v1/companies-update.js';

describe('version 1 company update fields', () => {
  it('accepts every field of the spec with the right type', () => {
    expect(
      companyUpdateProblems({
        domain: 'a.com',
        description: 'd',
        name: 'n',
        altIndustries: ['x'],
        tags: ['a', 'b'],
        foundedYear: 1998,
        address: 'a',
        city: 'c',
        state: 's',
        country: 'c',
        linkedin: 'l',
        twitter: 't',
        facebook: 'f',
        instagram: 'i',
        crunchbase: 'c',
        phone: 'p',
        remarks: 'r',
      }),
    ).toEqual([]);
  });
  it.each([
    [{ founded_year: 1998 }, /founded_year: not a version 1 company field \(did you mean foundedYear\?\)/],
    [{ industry: 'x' }, /industry: not a version 1 company field/],
    [{ foundedYear: '1998' }, /foundedYear: must be an integer/],
    [{ foundedYear: 1998.5 }, /foundedYear: must be an integer/],
    [{ tags: 'a;b' }, /tags: must be an array of strings/],
    [{ altIndustries: [1] }, /altIndustries: must be an array of strings/],
    [{ city: 5 }, /city: must be a string/],
  ])('%j is refused', (body, message) => {
    expect(companyUpdateProblems(body).join('\n')).toMatch(message);
    expect(() => checkCompanyUpdate(body)).toThrow(/invalid version 1 company update/);
  });
  it('an empty update is refused', () => {
    expect(() => checkCompanyUpdate({})).toThrow(/nothing to update/);
  });
});
