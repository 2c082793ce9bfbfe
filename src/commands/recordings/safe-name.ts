// Turns a server-chosen recording id into a file name that cannot escape the download folder or
// upset any common file system (the bug class of gh's GHSA-2m9h-r57g-45pj), and checks the result.
import { createHash } from 'node:crypto';
import path from 'node:path';

/** Total budget of a name, in UTF-8 bytes, before the caller's extension (`.json`) and temp suffix. */
export const MAX_NAME_BYTES = 200;

/**
 * Never left in an unchanged name, so it marks a changed one: `<cleaned>~<hash of the id>`. An id
 * kept as is has no `~`, and every changed name carries the hash of its own id, so distinct ids
 * always get distinct names (up to a 48-bit hash collision).
 */
const MARK = '~';
const HASH_HEX = 12;

// Control characters (C0, DEL, C1: \p{Cc}), invisible format characters that let a name pretend
// to be another one on a terminal (\p{Cf}: bidi overrides and isolates, zero-width characters,
// BOM, soft hyphen, tag characters, …), line and paragraph separators, lone surrogates (with the
// `u` flag a well-formed pair is one code point, so only a lone half is \p{Cs}), path separators,
// characters Windows refuses in names, and the marker.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}/\\<>:"|?*~]/gu;

// Windows device names, reserved with any extension and whatever the case (`nul.json`, `Com1`),
// including the superscript-digit forms Windows also treats as devices.
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i;

export interface SafeNameOptions {
  /** append the hash even when nothing had to change (used to split case-insensitive collisions) */
  forceHash?: boolean;
}

export function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, HASH_HEX);
}

/** Cuts a string to at most `maxBytes` UTF-8 bytes without splitting a code point. */
function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > maxBytes) break;
    out += ch;
    bytes += n;
  }
  return out;
}

function isReserved(name: string): boolean {
  // Windows ignores an extension and trailing spaces/dots when it matches device names.
  const base = name.split('.')[0]!.replace(/[ .]+$/, '');
  return RESERVED.test(base);
}

/**
 * A file name (without extension) for a recording id: the id itself when it is already safe,
 * otherwise a cleaned form followed by `~` and a short hash of the original id.
 */
export function safeFileName(id: string, options: SafeNameOptions = {}): string {
  let name = id.replace(UNSAFE, '_');
  // Leading dots would hide the file or mean `.`/`..`; trailing dots and spaces vanish on Windows.
  name = name.replace(/^\.+/, (dots) => '_'.repeat(dots.length));
  name = name.replace(/[. ]+$/, (tail) => '_'.repeat(tail.length));
  if (name === '') name = '_';
  if (isReserved(name)) name = `_${name}`;

  const changed = name !== id || options.forceHash === true || Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES;
  if (!changed) return name;
  const suffix = `${MARK}${shortHash(id)}`;
  let cut = truncateUtf8(name, MAX_NAME_BYTES - suffix.length);
  // Truncation may expose a trailing dot or space again.
  cut = cut.replace(/[. ]+$/, (tail) => '_'.repeat(tail.length));
  return cut + suffix;
}

/**
 * The key under which two names collide on a case-insensitive or normalising file system. Lower,
 * upper, then lower case again, because file systems fold case in either direction: NTFS
 * upper-cases (`ı` and `i` are both `I` there), APFS case-folds (`ſ` is `s`, `ẞ` is `ss`), and
 * lower case alone misses all three. Folding too much only costs a hash in a name; folding too
 * little lets one file overwrite another.
 */
export function foldedName(name: string): string {
  return name.normalize('NFC').toLowerCase().toUpperCase().toLowerCase().normalize('NFC');
}

/**
 * The absolute path of `name` directly inside `dir`, or an error when it would land anywhere else
 * (a separator, `..`, an absolute path, an empty name). A last line of defence behind safeFileName.
 */
export function resolveInside(dir: string, name: string): string {
  const root = path.resolve(dir);
  if (
    name === '' ||
    name === '.' ||
    name === '..' ||
    name.includes('/') ||
    name.includes('\\') ||
    name.includes('\u0000') ||
    path.isAbsolute(name)
  ) {
    throw new UnsafePathError(name, root);
  }
  const full = path.resolve(root, name);
  if (path.dirname(full) !== root || path.relative(root, full) !== name) {
    throw new UnsafePathError(name, root);
  }
  return full;
}

export class UnsafePathError extends Error {
  constructor(name: string, root: string) {
    super(`refusing to write ${JSON.stringify(name)}: it would not stay inside ${root}`);
    this.name = 'UnsafePathError';
  }
}
