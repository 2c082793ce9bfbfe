// Keys are never shown whole (CONTRACT §2): the known prefix and the last four characters,
// e.g. `service_live_…f3a9`. Short or unknown keys reveal less.
import { V1_KEY_PREFIX, V2_KEY_PREFIX } from './key-kind.js';

const TAIL = 4;
// Below this many secret characters, showing four of them would give away too much.
const MIN_SECRET_FOR_TAIL = 12;

export function maskKey(key: string | undefined): string | undefined {
  if (key === undefined || key === '') return key === '' ? '' : undefined;
  const prefix = [V2_KEY_PREFIX, V1_KEY_PREFIX].find((p) => key.startsWith(p)) ?? '';
  const secret = key.slice(prefix.length);
  if (secret.length < MIN_SECRET_FOR_TAIL) return `${prefix}…`;
  return `${prefix}…${secret.slice(-TAIL)}`;
}
