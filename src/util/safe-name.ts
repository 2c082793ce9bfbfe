// Turns a server-chosen recording id into a file name that cannot escape the download folder or
// upset any common file system (the bug class of gh's GHSA-2m9h-r57g-45pj), and checks the result.
// Shared by `crm recordings download` / `crm snapshot --transcripts` (writing) and `crm sandbox
// --from` (finding a snapshot's transcript of a recording id), hence in util.
import { createHash } from 'node:crypto';
import path from 'node:path';

/** Total budget of a name, in UTF-8 bytes, before the caller's extension (`.json`) and temp suffix. */
export const MAX_NAME_BYTES = 200;

/** Marks a changed name, `<cleaned>~<hash of the id>` (never left in an unchanged one): distinct ids get distinct names. */
const MARK = '~';
const HASH_HEX = 12;

// Controls, invisible format characters (bidi, zero-width: a name posing as another), line and
// paragraph separators, lone surrogates, path separators, what Windows refuses, and the marker.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}/\\<>:"|?*~]/gu;

// Windows device names, before any extension and in any case (`nul.json`, `Com1`, `COM¹`).
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/i;

export function shortHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, HASH_HEX);
}

/** Cuts a string (no lone surrogates) to at most `maxBytes` UTF-8 bytes without splitting a code point. */
function truncateUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  let end = Math.min(maxBytes, bytes.length);
  while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--; // back to the start of a code point
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * A file name (without extension) for a recording id: the id when safe, else cleaned + `~` + its hash;
 * `forceHash` appends the hash to an unchanged name too (splits case-insensitive collisions).
 */
export function safeFileName(id: string, options: { forceHash?: boolean } = {}): string {
  let name = id.replace(UNSAFE, '_');
  // Leading dots would hide the file or mean `.`/`..`; trailing dots and spaces vanish on Windows.
  name = name.replace(/^\.+/, (dots) => '_'.repeat(dots.length));
  name = name.replace(/[. ]+$/, (tail) => '_'.repeat(tail.length));
  if (name === '') name = '_';
  if (RESERVED.test(name.split('.')[0]!.replace(/[ .]+$/, ''))) name = `_${name}`;

  const changed = name !== id || options.forceHash === true || Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES;
  if (!changed) return name;
  const suffix = `${MARK}${shortHash(id)}`;
  let cut = truncateUtf8(name, MAX_NAME_BYTES - suffix.length);
  cut = cut.replace(/[. ]+$/, (tail) => '_'.repeat(tail.length));
  return cut + suffix;
}

/**
 * The key under which two names collide on a case-insensitive or normalising file system: lower,
 * upper, lower again, since NTFS upper-cases (`ı` → `I`) and APFS case-folds (`ẞ` → `ss`).
 */
export function foldedName(name: string): string {
  return name.normalize('NFC').toLowerCase().toUpperCase().toLowerCase().normalize('NFC');
}

/** The path of `name` directly inside `dir`, or an UnsafePathError: the last defence behind safeFileName. */
export function resolveInside(dir: string, name: string): string {
  const root = path.resolve(dir);
  const full = path.resolve(root, name);
  const bad = name === '.' || /[/\\\u0000]/.test(name) || path.isAbsolute(name);
  if (bad || path.dirname(full) !== root || path.relative(root, full) !== name) throw new UnsafePathError(name, root);
  return full;
}

export class UnsafePathError extends Error {
  constructor(name: string, root: string) {
    super(`refusing to write ${JSON.stringify(name)}: it would not stay inside ${root}`);
    this.name = 'UnsafePathError';
  }
}

/** `<safe id>.json` for each id; names colliding on a case-insensitive file system all take the hashed form. */
export function fileNames(ids: readonly string[]): string[] {
  const names = ids.map((id) => safeFileName(id));
  const byFold = new Map<string, number>();
  for (const name of names) byFold.set(foldedName(name), (byFold.get(foldedName(name)) ?? 0) + 1);
  return names.map(
    (name, i) => `${(byFold.get(foldedName(name)) ?? 0) > 1 ? safeFileName(ids[i]!, { forceHash: true }) : name}.json`,
  );
}
