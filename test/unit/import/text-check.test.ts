// TextCheck: the first pass's whole-file check for bytes that do not decode, fed in any chunks.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { TextCheck, Utf8Lookalike } from '../../../src/import/input/source.js';

const dir = mkdtempSync(join(tmpdir(), 'crm-text-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The check over `bytes` fed in pieces cut at `cuts`, its lines resolved against the file. */
async function check(bytes: Buffer, cuts: number[] = []): Promise<TextCheck> {
  const path = join(dir, 'f.csv');
  writeFileSync(path, bytes);
  const t = new TextCheck();
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    t.push(bytes.subarray(at, Math.max(at, cut)));
    at = Math.max(at, cut);
  }
  t.push(bytes.subarray(at));
  t.end();
  await t.resolve(path);
  return t;
}

describe('TextCheck', () => {
  it('names the lines (CRLF, LF and CR ends) with bytes that are not UTF-8, showing them as \\xNN', async () => {
    const bytes = Buffer.concat([
      Buffer.from('a,b\r\nZoë,x\rRen'),
      Buffer.from([0xe9]),
      Buffer.from('\n\n"q\n'),
      Buffer.from([0xc3, 0x28, 0x09]),
    ]);
    expect((await check(bytes)).lines).toEqual([
      { line: 3, snippet: 'Ren\\xE9' },
      { line: 6, snippet: '\\xC3(\\x09' },
    ]);
    expect((await check(bytes, [7, 14])).lines.map((l) => l.line)).toEqual([3, 6]);
    expect((await check(Buffer.from('email\r\nZoë 😀\r\n'))).error('f.csv', 'utf-8')).toBeUndefined();
  });

  it('stops after five lines and says there are more', async () => {
    const t = await check(Buffer.from(Array.from({ length: 7 }, () => 'x\xff').join('\n'), 'latin1'));
    expect(t.lines.map((l) => l.line)).toEqual([1, 2, 3, 4, 5]);
    expect(t.error('f.csv', 'utf-8')?.message).toMatch(/line 5 \("x\\xFF"\), … have bytes/);
    expect(t.error('-', 'windows-1252')?.message).toMatch(
      /^standard input cannot be decoded as windows-1252: line 1, line 2, line 3, line 4, line 5, …/,
    );
  });

  it('names the same lines however the bytes are cut into chunks', async () => {
    const piece = fc.constantFrom('a', ',', '\r', '\n', '\r\n', 'é', '😀', '\xff', '\xc3', '\x80');
    const lines = (t: TextCheck): number[] => t.lines.map((l) => l.line);
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 40 }),
        fc.array(fc.nat(200), { maxLength: 6 }),
        async (pieces, cuts) => {
          const bytes = Buffer.concat(
            pieces.map((p) => (/[\x80-\xff]/.test(p) && p.length === 1 ? Buffer.from(p, 'latin1') : Buffer.from(p))),
          );
          const whole = lines(await check(bytes));
          expect(lines(await check(bytes, cuts))).toEqual(whole);
        },
      ),
      runs(200),
    );
  });

  it('Utf8Lookalike: UTF-8 with accents, cut anywhere, is refused for an 8-bit encoding; ASCII and real Windows-1252 are not', () => {
    const feed = (b: Buffer, cut: number): Utf8Lookalike => {
      const l = new Utf8Lookalike();
      l.push(b.subarray(0, cut));
      l.push(b.subarray(cut));
      return l;
    };
    const utf8 = Buffer.from('email\nRené,Zoë\n');
    for (let cut = 0; cut <= utf8.length; cut++)
      expect(feed(utf8, cut).error('f.csv', 'windows-1252')?.message).toMatch(
        /is UTF-8 text \("[^"]*(é|ë)[^"]*"\), .* as "[^"]*Ã[^"]*"/,
      );
    expect(feed(utf8, 0).error('f.csv', 'windows-1252')?.message).toMatch(/\("René,Zoë"\), .* as "RenÃ©,ZoÃ«"/);
    expect(feed(Buffer.from('email\nRene\n'), 3).error('f.csv', 'windows-1252')).toBeUndefined();
    expect(feed(Buffer.from('email\nRené\n', 'latin1'), 3).error('f.csv', 'windows-1252')).toBeUndefined();
  });
});
