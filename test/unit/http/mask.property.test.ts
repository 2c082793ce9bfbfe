// Property tests of key masking (issue 9, class 3): for any key and any text embedding it, raw or
// escaped as JSON, C or URL text may write it, what crm keeps never contains the key.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { keyRedactor, maskKey } from '../../../src/http/mask.js';

/** keys of both forms: the prefix and 12–40 printable ASCII characters (key-kind.ts allows any of them) */
const keyArb = fc
  .tuple(
    fc.constantFrom('service_live_', 'service_pk_'),
    fc.string({
      unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
      minLength: 12,
      maxLength: 40,
    }),
  )
  .map(([p, body]) => p + body);

const hex = (c: string, upper: boolean): string => {
  const h = c.charCodeAt(0).toString(16).padStart(2, '0');
  return upper ? h.toUpperCase() : h;
};

/** the key written with each character, at random, raw or as a JSON escape (`\u00XX`, `\"`, `\\`, `\/`) */
const jsonWritten = (key: string) =>
  fc.array(fc.nat(3), { minLength: key.length, maxLength: key.length }).map((how) =>
    Array.from(key, (c, i) => {
      const pick = how[i]!;
      if (c === '"' || c === '\\') return pick % 2 === 0 ? `\\${c}` : `\\u00${hex(c, pick === 3)}`;
      if (pick === 0 && c === '/') return '\\/';
      return pick === 1 ? `\\u00${hex(c, false)}` : pick === 2 ? `\\u00${hex(c, true)}` : c;
    }).join(''),
  );

/** the key with any characters written as `%XX`, `\xXX` or `\u00XX` (a URL, a C-style or double-escaped text) */
const textWritten = (key: string) =>
  fc
    .array(fc.nat(3), { minLength: key.length, maxLength: key.length })
    .map((how) =>
      Array.from(key, (c, i) => [c, `%${hex(c, true)}`, `\\x${hex(c, false)}`, `\\u00${hex(c, false)}`][how[i]!]).join(
        '',
      ),
    );

const jsonSafe = fc.string({ maxLength: 30 }).map((s) => JSON.stringify(s).slice(1, -1));
const around = fc.string({ maxLength: 30 });

describe('keyRedactor (properties)', () => {
  it('a key JSON-escaped anywhere in a body: the parsed value never holds it, nor the quoted text', () => {
    fc.assert(
      fc.property(
        keyArb.chain((key) => fc.tuple(fc.constant(key), jsonWritten(key), jsonSafe, jsonSafe, fc.boolean())),
        ([key, written, before, after, asName]) => {
          const text = asName
            ? `{"${before}${written}${after}": 1}`
            : `{"data": {"notes": "${before}${written}${after}"}, "n": 1}`;
          const r = keyRedactor([key]);
          const value = r.value(JSON.parse(text) as unknown);
          expect(JSON.stringify(value)).not.toContain(key);
          expect(JSON.stringify(value)).toContain(JSON.stringify(maskKey(key)).slice(1, -1));
          // the quote of a body that is not an envelope: masked in the raw text, before any cut
          const quoted = r.text(text);
          expect(quoted).not.toContain(key);
          expect(quoted).not.toContain(written);
        },
      ),
      runs(1000),
    );
  });

  it('a key URL-, C- or doubly escaped in a header or a string: masked', () => {
    fc.assert(
      fc.property(
        keyArb.chain((key) => fc.tuple(fc.constant(key), textWritten(key), around, around)),
        ([key, written, before, after]) => {
          const r = keyRedactor(['service_pk_someOtherKey1234', key]);
          const h = r.headers({
            'x-request-id': `${before}${written}${after}`,
            location: `https://x.example/?k=${written}`,
          });
          for (const v of Object.values(h)) {
            expect(v).not.toContain(written);
            expect(v).not.toContain(key);
          }
          expect(r.text(`${before}${key}${after}${key}`)).not.toContain(key);
        },
      ),
      runs(1000),
    );
  });

  it('text without a key is returned as it is', () => {
    fc.assert(
      fc.property(keyArb, fc.string({ maxLength: 60 }), (key, s) => {
        fc.pre(!s.includes(key.slice(0, 10)));
        expect(keyRedactor([key]).text(s)).toBe(s);
      }),
      runs(100),
    );
  });
});
