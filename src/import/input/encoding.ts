// `--encoding` labels, the not-text check of a file's start, the per-row text check (the reader reads UTF-8 only).
import { isUtf8 } from 'node:buffer';
import { UsageError } from '../../http/errors.js';
import { UTF8 } from '../../util/text.js';

export { UTF8 };

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

/** Why a file's first line is not text (a NUL byte: binary, /dev/zero, UTF-16 without a BOM); undefined if it is. */
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

/** `_error_code` of a row with bytes its encoding cannot decode, and of a row with a NUL byte. */
export const INVALID_ENCODING = 'INVALID_ENCODING';
export const INVALID_CHARACTER = 'INVALID_CHARACTER';

/** A NUL byte, or a U+FFFD that the row's bytes show was undecodable (a file may hold U+FFFD itself). */
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
