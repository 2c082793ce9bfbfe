// A record's id as the text a path takes. The spec does not give ids a type: a server may send `{"id": 101}`, and
// one beyond a double is kept exact as a RawNumber. crm (the reconcile's index, delete backups) and the sandbox
// (a snapshot served by `--from`) key records by this one text.
import { RawNumber } from '../json/exact-json.js';

/** A string id as it is, a number id as its digits as the server wrote them; undefined for any other (`""`, null, an object). */
export function idText(id: unknown): string | undefined {
  if (typeof id === 'string') return id === '' ? undefined : id;
  if (typeof id === 'number') return Number.isFinite(id) ? String(id) : undefined;
  return id instanceof RawNumber ? id.text : undefined;
}
