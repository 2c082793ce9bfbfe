// Decoding import input: transcoding to UTF-8 in any chunking, undecodable input marked (never
// replaced), BOMs, labels, the not-text check, and the copy of a stream (its cap and Ctrl-C).
import { readFileSync } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { InterruptedError, UsageError } from '../../../src/http/errors.js';
import { notTextReason, resolveEncoding } from '../../../src/import/input/source.js';
import { createTranscoder, detectBom, UNDECODABLE_BYTE } from '../../../src/util/text.js';
import { prepareInput } from '../../../src/import/input/source.js';
import { tempDir } from '../../helpers/temp.js';

function transcode(encoding: string, bytes: Buffer, cuts: number[]): Buffer {
  const t = createTranscoder(encoding);
  const out: Buffer[] = [];
  let at = 0;
  for (const c of [...new Set(cuts.map((x) => x % (bytes.length + 1)))].sort((a, b) => a - b)) {
    out.push(t.push(bytes.subarray(at, c)));
    at = c;
  }
  out.push(t.push(bytes.subarray(at)), t.end());
  return Buffer.concat(out);
}

const cuts = fc.array(fc.nat(), { maxLength: 6 });

describe('transcoding to UTF-8', () => {
  it('UTF-16 LE and BE: any text, cut anywhere, comes out as its UTF-8', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), cuts, fc.boolean(), (s, at, be) => {
        const le = Buffer.from(s, 'utf16le');
        const bytes = be ? Buffer.from(le).swap16() : le;
        expect(transcode(be ? 'utf-16be' : 'utf-16le', bytes, at).toString('utf8')).toBe(s);
      }),
      runs(100),
    );
  });

  it('Windows-1252: 0x80–0x9F as the WHATWG table says, the rest as Latin-1; the five undefined bytes are marked', () => {
    // (Node 20's own TextDecoder('windows-1252') decodes 0x80–0x9F as Latin-1 control characters)
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const out = transcode('windows-1252', all, [7, 130]);
    const undefinedBytes = [0x81, 0x8d, 0x8f, 0x90, 0x9d];
    expect([...out].filter((b) => b === UNDECODABLE_BYTE)).toHaveLength(undefinedBytes.length);
    const text = Buffer.from(out.filter((b) => b !== UNDECODABLE_BYTE)).toString('utf8');
    expect(text).toHaveLength(256 - undefinedBytes.length);
    expect(text.slice(0, 0x80)).toBe(all.subarray(0, 0x80).toString('latin1'));
    expect(text.slice(0x80 - 0, 0x80 + 27)).toBe('€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ');
    expect(text.slice(-0x60)).toBe(all.subarray(0xa0).toString('latin1'));
  });

  it('a lone surrogate or an odd final byte in UTF-16 is marked with a byte that is never UTF-8', () => {
    const lone = Buffer.from([0x61, 0, 0x00, 0xd8, 0x62, 0, 0x63]);
    expect([...transcode('utf-16le', lone, [3])]).toEqual([0x61, UNDECODABLE_BYTE, 0x62, UNDECODABLE_BYTE]);
  });

  it('labels: aliases, latin1 as Windows-1252 (WHATWG), unknown ones refused', () => {
    expect(resolveEncoding('UTF8')).toBe('utf-8');
    expect(resolveEncoding('latin1')).toBe('windows-1252');
    expect(resolveEncoding('CP1252')).toBe('windows-1252');
    expect(resolveEncoding('UTF-16BE')).toBe('utf-16be');
    expect(() => resolveEncoding('klingon')).toThrow(UsageError);
  });

  it('BOMs and the not-text check', () => {
    expect(detectBom(Buffer.from([0xfe, 0xff, 0, 0x61]))).toEqual({ encoding: 'utf-16be', length: 2 });
    expect(detectBom(Buffer.from('abc'))).toBeUndefined();
    expect(notTextReason(Buffer.alloc(64))).toMatch(/NUL byte at offset 0/);
    expect(notTextReason(Buffer.from('email\nx\0y\n'))).toBeUndefined(); // a NUL in a row is that row's problem
    expect(notTextReason(Buffer.from('email,name\n', 'utf16le'))).toMatch(/UTF-16 without a byte order mark/);
  });
});

describe('prepareInput: a stream is copied once', () => {
  const tmp = () => tempDir('crm-src-');

  it('beyond the cap it stops with a usage error and leaves no copy', async () => {
    const dir = tmp();
    const err = await prepareInput('-', {
      stdin: Readable.from([Buffer.from('email\n'), Buffer.alloc(5000, 0x61)]),
      tmpDir: dir,
      maxCopyBytes: 1000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/larger than 1000 bytes/);
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('stops at once on the abort signal, even while the stream is silent', async () => {
    const ac = new AbortController();
    const silent = new PassThrough();
    silent.write('email\n');
    const p = prepareInput('-', { stdin: silent, tmpDir: tmp(), signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await expect(p).rejects.toBeInstanceOf(InterruptedError);
  });

  it('transcodes a UTF-16 stream with a BOM', async () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('email\nzoë@x\n', 'utf16le')]);
    const input = await prepareInput('-', {
      stdin: Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]),
      tmpDir: tmp(),
    });
    expect(input.encoding).toBe('utf-16le');
    expect(readFileSync(input.path, 'utf8')).toBe('email\nzoë@x\n');
    await input.cleanup();
  });
});
