// Keys never appear whole in output: --verbose lines, error messages and key lists show them masked.

const KNOWN_PREFIX = /^(service_(?:live|pk)_)(.+)$/;
/** below this many characters after the prefix, even the last 4 would give too much away */
const MIN_TAIL_TO_SHOW = 12;
const FULL_MASK = '****';

/** `service_live_…f3a9`: the known prefix and the last 4 characters; anything else fully masked. */
export function maskKey(key: string | undefined | null): string {
  if (!key) return FULL_MASK;
  const m = KNOWN_PREFIX.exec(key);
  if (!m || m[2]!.length < MIN_TAIL_TO_SHOW) return FULL_MASK;
  return `${m[1]}…${m[2]!.slice(-4)}`;
}

/** Replaces every occurrence of `key` in `text` by its mask (a server may echo it back). */
export function redactKey(text: string, key: string | undefined | null): string {
  if (!key || key.length < 4) return text;
  return text.split(key).join(maskKey(key));
}
