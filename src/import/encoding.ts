// The text encoding of an import file. The reader reads UTF-8 only; a file in another encoding
// (a UTF-16 BOM, or `--encoding`) is transcoded once into a UTF-8 copy (source.ts), and the rows
// are checked there. Undecodable input is never replaced silently: a byte sequence that has no
// character in the source encoding is written to the copy as the byte 0xFF, which is never valid
// UTF-8, so the row it is in becomes an invalid row (INVALID_ENCODING), exactly as an invalid byte
// in a UTF-8 file does. UTF-8, UTF-16 and Windows-1252 (what `latin1` means to TextDecoder and to
// spreadsheets) are decoded here without ICU; other labels use TextDecoder, which needs a Node.js
// with full ICU (the official builds; a small-icu build has only the UTF encodings).
import { isUtf8 } from 'node:buffer';
import { UsageError } from '../http/errors.js';

export const UTF8 = 'utf-8';

/** what replaces an undecodable sequence in the UTF-8 copy (never valid UTF-8) */
export const UNDECODABLE_BYTE = 0xff;
/** the same mark inside a decoded string (a lone surrogate: no encoder turns it into valid UTF-8) */
const MARK = '\udfff';

const ALIASES: Record<string, string> = {
  utf8: UTF8,
  'utf-8': UTF8,
  'unicode-1-1-utf-8': UTF8,
  utf16le: 'utf-16le',
  'utf-16le': 'utf-16le',
  'utf-16': 'utf-16le',
  ucs2: 'utf-16le',
  'ucs-2': 'utf-16le',
  utf16be: 'utf-16be',
  'utf-16be': 'utf-16be',
  // as in the WHATWG Encoding Standard (TextDecoder, browsers): Latin-1 labels mean Windows-1252,
  // which agrees with ISO-8859-1 except in 0x80–0x9F, where ISO-8859-1 has control characters
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  'x-cp1252': 'windows-1252',
  latin1: 'windows-1252',
  'iso-8859-1': 'windows-1252',
  'iso8859-1': 'windows-1252',
  l1: 'windows-1252',
  ascii: 'windows-1252',
  'us-ascii': 'windows-1252',
};

/** `--encoding LABEL` → its canonical name; a label this Node.js cannot decode is a UsageError. */
export function resolveEncoding(label: string): string {
  const key = label.trim().toLowerCase();
  const known = ALIASES[key];
  if (known) return known;
  try {
    return new TextDecoder(key).encoding;
  } catch {
    throw new UsageError(`unknown or unsupported --encoding ${JSON.stringify(label)}`, {
      hint: 'utf-8, utf-16le, utf-16be and windows-1252 (latin1) always work; other WHATWG labels (e.g. iso-8859-15, shift_jis) need a Node.js built with full ICU',
    });
  }
}

/** The encoding a byte order mark at the start says, and the BOM's length. */
export function detectBom(head: Uint8Array): { encoding: string; length: number } | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: UTF8, length: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return undefined;
}

/**
 * Why the start of a file in an 8-bit encoding is not text at all, if it is not: a NUL byte on its
 * first line, the header (binary files, `/dev/zero`, UTF-16 without a BOM). A NUL on a later line
 * makes that row invalid (textProblem) rather than the whole file.
 */
export function notTextReason(head: Uint8Array): string | undefined {
  const nul = head.indexOf(0);
  if (nul < 0) return undefined;
  const lf = head.indexOf(0x0a);
  const cr = head.indexOf(0x0d);
  if ((lf >= 0 && lf < nul) || (cr >= 0 && cr < nul)) return undefined;
  // UTF-16 text without a BOM: most code units are ASCII, so one byte of each pair is 0 and the other not
  let halves = 0;
  const pairs = Math.min(head.length >> 1, 256);
  for (let i = 0; i < pairs; i++) if ((head[2 * i] === 0) !== (head[2 * i + 1] === 0)) halves++;
  return pairs >= 2 && halves >= pairs * 0.75
    ? 'it looks like UTF-16 without a byte order mark; say which with --encoding utf-16le or --encoding utf-16be'
    : `it has a NUL byte at offset ${nul}, so it is not a text file`;
}

// Windows-1252's 0x80–0x9F; 0 where the byte has no character
const CP1252_HIGH = [
  0x20ac, 0, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017d, 0, 0, 0x2018, 0x2019, 0x201c,
  0x201d, 0x2022, 0x2013, 0x2014, 0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0, 0x017e, 0x0178,
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

/** `_error_code` of a row with bytes its encoding cannot decode, and of a row with a NUL byte. */
export const INVALID_ENCODING = 'INVALID_ENCODING';
export const INVALID_CHARACTER = 'INVALID_CHARACTER';

/**
 * Why a row's text cannot be imported as written, if it cannot: a NUL byte (no text has one), or
 * bytes its encoding cannot decode — which the decoder has turned into U+FFFD, so a U+FFFD in a
 * cell is checked against the row's bytes (`bytes()`): only invalid UTF-8 there counts (a file
 * may hold U+FFFD itself). `where(i)` names cell i for the message.
 */
export function textProblem(
  cells: readonly string[],
  bytes: () => Uint8Array,
  encoding: string,
  where: (i: number) => string,
): { code: string; reason: string } | undefined {
  const nul = cells.findIndex((c) => c.includes('\0'));
  if (nul >= 0) return { code: INVALID_CHARACTER, reason: `${where(nul)} has a NUL byte (0x00), which text never has` };
  const bad = cells.findIndex((c) => c.includes('\ufffd'));
  if (bad < 0 || isUtf8(bytes())) return undefined;
  return { code: INVALID_ENCODING, reason: undecodable(encoding, where(bad)) };
}

export function undecodable(encoding: string, where: string): string {
  return encoding === UTF8
    ? `${where} has bytes that are not valid UTF-8; if the file is in another encoding, say which with --encoding (e.g. --encoding windows-1252)`
    : `${where} has bytes that cannot be decoded as ${encoding}`;
}
