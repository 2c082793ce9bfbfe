// Which journal file is an import's: named from the content hash, resource, base URL and a
// non-secret identity of the API key (so the same file imported with another key is another
// import), or, for an import journaled before keys were part of the name, that older file.
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readHeader } from './journal-line.js';

export interface JournalIdentity {
  /** sha256 hex of the input file's bytes */
  contentSha256: string;
  resource: string;
  baseUrl: string;
  /** a non-secret identity of the API key (keyIdentity()); never the key itself */
  keyId?: string;
  /** the key masked (`service_live_…f3a9`), stored in the header to name it later; not part of the identity */
  keyMask?: string;
}

/** sha256 of the API key, truncated: tells keys apart without revealing them. */
export function keyIdentity(apiKey: string | undefined): string | undefined {
  return apiKey ? createHash('sha256').update(`crm-key\0${apiKey}`).digest('hex').slice(0, 16) : undefined;
}

export const trimBase = (u: string): string => u.replace(/\/+$/, '');

export function journalId(identity: JournalIdentity): string {
  const key = identity.keyId ? `\0key:${identity.keyId}` : '';
  return createHash('sha256')
    .update(`${identity.contentSha256}\0${identity.resource}\0${trimBase(identity.baseUrl)}${key}`)
    .digest('hex');
}

export function journalPath(dir: string, identity: JournalIdentity): string {
  return join(dir, `${journalId(identity)}.jsonl`);
}

/** The journal of this identity, or of the same import journaled before keys were part of the name. */
export async function existingPath(dir: string, identity: JournalIdentity): Promise<string> {
  const path = journalPath(dir, identity);
  if (!identity.keyId) return path;
  const legacy = journalPath(dir, { ...identity, keyId: undefined });
  const [here, old] = await Promise.all([
    stat(path).then(
      () => true,
      () => false,
    ),
    stat(legacy).then(
      () => true,
      () => false,
    ),
  ]);
  if (here || !old) return path;
  const h = await readHeader(legacy);
  return h && h.key_id === undefined ? legacy : path;
}
