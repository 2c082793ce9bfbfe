// The Idempotency-Key of a chunk (CONTRACT §7): derived from the base URL, the resource and the
// chunk's exact body, so a rerun of the same file sends the same key with the same body and the
// server replays its cached answer instead of creating the rows again.
import { createHash } from 'node:crypto';

export const CHUNK_KEY_PREFIX = 'crm-batch-';

/** `crm-batch-` + sha256 hex of base URL, resource and body (74 printable ASCII characters). */
export function chunkKey(baseUrl: string, resource: string, bodyJson: string): string {
  const h = createHash('sha256');
  // NUL separators: no base URL or resource contains one, so the three parts cannot run together
  h.update(baseUrl.replace(/\/+$/, ''));
  h.update('\0');
  h.update(resource);
  h.update('\0');
  h.update(bodyJson);
  return CHUNK_KEY_PREFIX + h.digest('hex');
}
