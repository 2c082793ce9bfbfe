// Authentication (docs/sandbox.md, "Authentication, scopes, access"): exactly one of the two
// headers, a known key of the path's API version, then scopes and record ownership.
import { ApiError } from './responses.js';
import type { KeyDef } from './types.js';

const unauthenticated = (message: string) => new ApiError(401, 'UNAUTHENTICATED', message);

/** The key of the request, or a 401 ApiError; `headers` are `headersDistinct` (a header sent twice is refused). */
export function authenticate(
  headers: Partial<Record<string, string[]>>,
  keys: ReadonlyMap<string, KeyDef>,
  version: 1 | 2,
): KeyDef {
  const apiKeys = headers['x-service-api-key'];
  const authorizations = headers.authorization;
  if (apiKeys && authorizations) {
    throw new ApiError(
      401,
      'AMBIGUOUS_CREDENTIALS',
      'Send the key in exactly one of X-Service-Api-Key and Authorization, not both',
    );
  }
  const [sent, ...more] = apiKeys ?? authorizations ?? [];
  if (more.length > 0) throw new ApiError(401, 'AMBIGUOUS_CREDENTIALS', 'Send exactly one authentication header, once');
  if (sent === undefined) throw unauthenticated('No API key: send X-Service-Api-Key or Authorization: Bearer');
  // Spec: "Version 1 headers: Content-Type: application/json and X-Service-Api-Key".
  if (!apiKeys && version === 1) {
    throw unauthenticated(
      'Version 1 takes the API key only in the X-Service-Api-Key header; Authorization: Bearer is not accepted on /api/v1',
    );
  }
  const key = apiKeys ? sent.trim() : /^Bearer +(\S+)\s*$/i.exec(sent)?.[1];
  if (!key)
    throw unauthenticated(
      apiKeys ? 'Malformed X-Service-Api-Key header' : 'Malformed Authorization header: expected "Bearer <API_KEY>"',
    );
  const def = keys.get(key);
  if (!def) throw unauthenticated('Invalid API key');
  if (def.version === version) return def;
  const message = `A version ${def.version} key does not authenticate against /api/v${version}: version 1 and version 2 keys are not interchangeable`;
  throw new ApiError(401, 'WRONG_API_VERSION', message);
}

export function requireScope(key: KeyDef, scope: string): void {
  // version 1 keys had full access
  if (key.version === 2 && !key.scopes.includes(scope))
    throw new ApiError(403, 'INSUFFICIENT_SCOPE', `This key lacks the scope ${scope}`, [{ required_scope: scope }]);
}

/** Whether the key may see a record: organization keys see all, user-bound keys their own. */
export function canSee(key: KeyDef, record: { owner_id?: unknown }): boolean {
  return key.access === 'organization' || record.owner_id === key.user;
}

export function requireOwner(key: KeyDef, record: { id?: unknown; owner_id?: unknown }): void {
  if (!canSee(key, record))
    throw new ApiError(403, 'FORBIDDEN_RECORD', `Record ${String(record.id)} belongs to another user`, [
      { id: String(record.id) },
    ]);
}

/** An update's `owner_id`: a user-bound key may not give its record to another user (403 FORBIDDEN_OWNER). */
export function requireOwnerChange(key: KeyDef, ownerId: string | undefined): void {
  if (ownerId !== undefined && !canSee(key, { owner_id: ownerId }))
    throw new ApiError(403, 'FORBIDDEN_OWNER', `A user-bound key cannot set owner_id to another user (${ownerId})`, [
      { field: 'owner_id', issue: 'other_user' },
    ]);
}
