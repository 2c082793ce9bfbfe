// resolveUrl's plain-path shortcut (src/http/url.ts): for any path and query, the URL it gives is the one the checked
// join gives (setters, origin and root checks), and a path the checked join refuses is refused by both.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveUrl, resolveUrlChecked } from '../../../src/http/url.js';
import { runs } from '../../helpers/property.js';

const outcome = (f: () => URL): string => {
  try {
    return f().href;
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
};

const path = fc.string({
  unit: fc.constantFrom(
    '/',
    'a',
    'Z',
    '0',
    '.',
    '%',
    '2',
    'e',
    'E',
    'f',
    '?',
    '#',
    ' ',
    '\\',
    'é',
    '@',
    ':',
    ';',
    '-',
    '_',
    '~',
    '&',
    '=',
  ),
  maxLength: 16,
});
const query = fc.dictionary(
  fc.string({ maxLength: 6 }),
  fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(undefined)),
  { maxKeys: 3 },
);
const base = fc.constantFrom(
  'https://crm.example.com/api/v2',
  'http://127.0.0.1:4010/api/v2',
  'http://[::1]:8080',
  'https://h.example/a%20b/',
);

describe('resolveUrl: the plain-path shortcut', () => {
  it('gives the URL the checked join gives, for every path and query', () => {
    fc.assert(
      fc.property(base, path, query, (b, p, q) => {
        const u = new URL(b);
        expect(outcome(() => resolveUrl(u, p, q))).toBe(outcome(() => resolveUrlChecked(u, p, q)));
      }),
      runs(3000),
    );
  });

  it('takes the paths crm builds (a record path with an encoded id) and a cursor query', () => {
    const u = new URL('http://127.0.0.1:4010/api/v2');
    expect(resolveUrl(u, `/contacts/${encodeURIComponent('a b/%2e.')}`, { limit: 100, cursor: 'x+y/z=' }).href).toBe(
      resolveUrlChecked(u, `/contacts/${encodeURIComponent('a b/%2e.')}`, { limit: 100, cursor: 'x+y/z=' }).href,
    );
    expect(resolveUrl(u, '/contacts', { limit: 100, cursor: 'c1' }).href).toBe(
      'http://127.0.0.1:4010/api/v2/contacts?limit=100&cursor=c1',
    );
  });
});
