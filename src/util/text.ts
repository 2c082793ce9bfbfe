// Bytes and text: byte order marks, streaming any encoding to UTF-8 without replacing what does not
// decode, and reading UTF-8 bytes back for messages. UTF-8, UTF-16 and Windows-1252 (what `latin1`
// means to TextDecoder and spreadsheets) are decoded here without ICU (Node 20's own
// `TextDecoder('windows-1252')` decodes 0x80–0x9F as Latin-1 controls); other labels use
// TextDecoder, which needs a Node.js with full ICU.

import { isUtf8 } from 'node:buffer';

export const UTF8 = 'utf-8';

/** what replaces an undecodable sequence in the UTF-8 copy (never valid UTF-8) */
export const UNDECODABLE_BYTE = 0xff;
/** the same mark inside a decoded string (a lone surrogate: no encoder turns it into valid UTF-8) */
const MARK = '\udfff';

/** The encoding a byte order mark at the start says, and the BOM's length. */
export function detectBom(head: Uint8Array): { encoding: string; length: number } | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: UTF8, length: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return undefined;
}

// Windows-1252's 0x80–0x9F; 0 where the byte has no character
const CP1252_HIGH = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0, 0,
  0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
];

/** Streaming bytes of `encoding` → UTF-8 bytes, an undecodable sequence → UNDECODABLE_BYTE. */
export interface Transcoder {
  push(chunk: Buffer): Buffer;
  end(): Buffer;
}

export function createTranscoder(encoding: string): Transcoder {
  const decode = decoderFor(encoding);
  return { push: (chunk) => toUtf8(decode(chunk, false)), end: () => toUtf8(decode(Buffer.alloc(0), true)) };
}

type Decode = (chunk: Buffer, end: boolean) => string;

function decoderFor(encoding: string): Decode {
  if (encoding === 'utf-16le' || encoding === 'utf-16be') return utf16Decoder(encoding === 'utf-16be');
  if (encoding === 'windows-1252') {
    return (chunk) => {
      let s = chunk.toString('latin1');
      if (/[\x80-\x9f]/.test(s))
        s = s.replace(/[\x80-\x9f]/g, (c) => {
          const cp = CP1252_HIGH[c.charCodeAt(0) - 0x80]!;
          return cp === 0 ? MARK : String.fromCharCode(cp);
        });
      return s;
    };
  }
  // legacy encodings cannot encode U+FFFD (gb18030 can, and is the one place this is conservative)
  const d = new TextDecoder(encoding, { fatal: false, ignoreBOM: false });
  return (chunk, end) => d.decode(chunk, { stream: !end }).replaceAll('\ufffd', MARK);
}

/** UTF-16 via Buffer (no ICU needed); a lone surrogate or a final odd byte is undecodable. */
function utf16Decoder(bigEndian: boolean): Decode {
  let carry: Buffer = Buffer.alloc(0);
  return (chunk, end) => {
    let buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let even = buf.length - (buf.length % 2);
    // keep a high surrogate at the end for the next chunk: its low half may be there
    if (!end && even >= 2) {
      const last = bigEndian ? buf.readUInt16BE(even - 2) : buf.readUInt16LE(even - 2);
      if (last >= 0xd800 && last <= 0xdbff) even -= 2;
    }
    carry = end ? Buffer.alloc(0) : Buffer.from(buf.subarray(even));
    const odd = end && buf.length % 2 === 1;
    buf = buf.subarray(0, even);
    if (bigEndian) buf = Buffer.from(buf).swap16();
    const s = buf.toString('utf16le');
    return odd ? s + MARK : s;
  };
}

/** A decoded string → UTF-8, each lone surrogate (an undecodable mark) as UNDECODABLE_BYTE. */
function toUtf8(s: string): Buffer {
  if (wellFormed(s)) return Buffer.from(s, 'utf8');
  const parts: Buffer[] = [];
  const mark = Buffer.from([UNDECODABLE_BYTE]);
  for (const piece of s.split(/([\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff])/)) {
    if (piece.length === 1 && !wellFormed(piece)) parts.push(mark);
    else if (piece.length > 0) parts.push(Buffer.from(piece, 'utf8'));
  }
  return Buffer.concat(parts);
}

/** String.prototype.isWellFormed (Node 20+; not in the ES2023 lib types): no lone surrogate. */
function wellFormed(s: string): boolean {
  return (s as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** The length of `b` without a UTF-8 sequence cut off at its end (at most 3 bytes). */
export function completeUpTo(b: Buffer): number {
  for (let k = 1; k <= Math.min(3, b.length); k++) {
    const c = b[b.length - k]!;
    if ((c & 0xc0) === 0x80) continue;
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > k ? b.length - k : b.length;
  }
  return b.length;
}

/** Where the first byte is that does not start a valid UTF-8 character, from `from` on; b.length if none. */
export function firstInvalid(b: Buffer, from: number): number {
  let i = from;
  while (i < b.length) {
    const c = b[i]!;
    const n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > b.length || !isUtf8(b.subarray(i, i + n))) return i;
    i += n;
  }
  return b.length;
}

const hex = (n: number): string => `\\x${n.toString(16).toUpperCase().padStart(2, '0')}`;

/** Bytes as text for a message: each undecodable byte, and control characters, as \xNN. */
export function render(b: Buffer): string {
  let out = '';
  let pos = 0;
  while (pos < b.length) {
    const bad = firstInvalid(b, pos);
    out += b
      .subarray(pos, bad)
      .toString('utf8')
      .replace(/[\0-\x1f\x7f]/g, (c) => hex(c.charCodeAt(0)));
    if (bad < b.length) out += hex(b[bad]!);
    pos = bad + 1;
  }
  return out;
}
