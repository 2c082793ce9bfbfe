// The fields the CRM's records have, for the column check of `crm batch` (src/import/check/check.ts), a header's
// field as written, and the kind an update's text cell is sent as: one page of the collection
// (`GET /RESOURCE?limit=100`, one request) and the resource table's own fields.
import type { ApiRecord } from '../../api/envelopes.js';
import { findResource } from '../../api/resources.js';
import type { HttpClient } from '../../http/types.js';
import { AuthError, InterruptedError } from '../../http/errors.js';
import { neverSent } from '../../http/network-error.js';
import { FieldKinds } from '../../import/input/typing.js';
import type { KnownFields } from '../../import/types.js';

/**
 * The field names of one page's records and the resource's own; undefined for an empty collection or a
 * failed read (no check, nothing said: a key without read scope may still write). A read that never
 * reached the API (a proxy refusing the tunnel or its password, no connection) or a refused key is
 * thrown: every chunk would fail alike, and nothing has been sent yet.
 */
export async function knownFields(
  client: HttpClient,
  resource: string,
  signal?: AbortSignal,
): Promise<KnownFields | undefined> {
  const page = { method: 'GET', path: `/${resource}`, query: { limit: 100 }, expect: 'list', signal } as const;
  const records = await client
    .request<{ data: ApiRecord[] }>(page)
    .then((res) => res.body.data)
    .catch((err: unknown) => {
      if (err instanceof InterruptedError || err instanceof AuthError || neverSent(err)) throw err;
      return undefined;
    });
  if (!records?.length) return undefined;
  const def = findResource(resource);
  const fields = new Set([...(def?.columns ?? []), ...(def?.required ?? [])]);
  const kinds = new FieldKinds();
  for (const r of records) {
    for (const k of Object.keys(r)) fields.add(k);
    kinds.see(r);
  }
  return Object.assign(fields, {
    sample: (field: string) => kinds.sample(field),
    mixed: (f: string) => kinds.mixed(f),
  });
}
