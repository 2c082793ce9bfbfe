// TextCheck: the first pass's whole-file check for bytes that do not decode, fed in any chunks.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextCheck } from '../../../src/import/text-check.js';

function check(bytes: Buffer, cuts: number[] = []): TextCheck {
  const t = new TextCheck();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    t.push(bytes.subarray(at, Math.max(at, cut)));
    at = Math.max(at, cut);
  }
  t.push(bytes.subarray(at));
  t.end();
  return t;
}

describe('TextCheck', () => {
  it('names the lines (CRLF, LF and CR ends) with bytes that are not UTF-8, showing them as \\xNN', () => {
    const bytes = Buffer.concat([Buffer.from('a,b\r\nZoë,x\rRen'), Buffer.from([0xe9]), Buffer.from('\n\n"q\n'), Buffer.from([0xc3, 0x28, 0x09])]);
    expect(check(bytes).lines).toEqual([{ line: 3, snippet: 'Ren\\xE9' }, { line: 6, snippet: '\\xC3(\\x09' }]);
    expect(check(Buffer.from('email\r\nZoë 😀\r\n')).error('f.csv', 'utf-8')).toBeUndefined();
  });

  it('stops after five lines and says there are more', () => {
    const t = check(Buffer.from(Array.from({ length: 7 }, () => 'x\xff').join('\n'), 'latin1'));
    expect(t.lines.map((l) => l.line)).toEqual([1, 2, 3, 4, 5]);
    expect(t.error('f.csv', 'utf-8')?.message).toMatch(/line 5 \("x\\xFF"\), … have bytes/);
    expect(t.error('-', 'windows-1252')?.message).toMatch(/^standard input cannot be decoded as windows-1252: line 1, line 2, line 3, line 4, line 5, …/);
  });

  it('names the same lines however the bytes are cut into chunks', () => {
    const piece = fc.constantFrom('a', ',', '\r', '\n', '\r\n', 'é', '😀', '\xff', '\xc3', '\x80');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.array(fc.nat(200), { maxLength: 6 }), (pieces, cuts) => {
        const bytes = Buffer.concat(pieces.map((p) => (/[\x80-\xff]/.test(p) && p.length === 1 ? Buffer.from(p, 'latin1') : Buffer.from(p))));
        const lines = (t: TextCheck): number[] => t.lines.map((l) => l.line);
        expect(lines(check(bytes, cuts))).toEqual(lines(check(bytes)));
      }),
    );
  });
});
