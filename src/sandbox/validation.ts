// Request body rules (docs/sandbox.md, "Paths"): bodies are JSON objects (arrays for batch),
// read-only fields may not be sent (an update may set `owner_id`), required fields are non-empty
// strings, emails contain `@`.
import type { ResourceDef } from '../api/resources.js';
import type { ApiRecord } from '../api/envelopes.js';
import { READ_ONLY_FIELDS } from '../api/resources.js';
import { RawNumber, decimalValue, parseJson as parseExactJson } from '../json/exact-json.js';
import { ApiError, invalidBody, type ErrorDetail } from './responses.js';

/** The parsed body, a number no double holds kept as a RawNumber (src/json); malformed JSON or an empty body is 422 INVALID_BODY. */
export function parseJson(raw: string): unknown {
  if (raw.trim() === '') throw invalidBody('The request needs a JSON body');
  try {
    return parseExactJson(raw);
  } catch (err) {
    throw invalidBody(`The body is not valid JSON: ${(err as Error).message}`);
  }
}

/** An integer of any size (spec: a version 1 `foundedYear`): a RawNumber too when its value is whole (`12345678901234567891`). */
export function isInteger(value: unknown): boolean {
  return Number.isInteger(value) || (value instanceof RawNumber && decimalValue(value.text)?.includes('e-') === false);
}

/** A JSON object: not an array, not a RawNumber (a number, though an object in JavaScript). */
export function isPlainObject(value: unknown): value is ApiRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof RawNumber);
}

/** A check that throws `Error('{where}: {what}')` unless `ok` (data and keys files); declare it `const need: Need`. */
export type Need = (ok: unknown, what: string) => asserts ok;
export const needIn =
  (where: string): Need =>
  (ok, what) => {
    if (!ok) throw new Error(`${where}: ${what}`);
  };

export function requireObject(value: unknown): ApiRecord {
  if (!isPlainObject(value)) throw invalidBody('The body must be a JSON object');
  return value;
}

/** The body as an object carrying only `allowed` fields, else 422 (`unknown_field` for each other one). */
export function objectWith(body: unknown, allowed: readonly string[]): ApiRecord {
  const fields = requireObject(body);
  const unknown = Object.keys(fields).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw failed(unknown.map((field) => ({ field, issue: 'unknown_field' })));
  return fields;
}

export function failed(details: ErrorDetail[]): ApiError {
  const first = details[0]!;
  const message =
    `Validation failed: ${String(first.field)} ${String(first.issue).replace(/_/g, ' ')}` +
    (details.length > 1 ? ` (and ${details.length - 1} more)` : '');
  return new ApiError(422, 'VALIDATION_FAILED', message, details);
}

/** The problems of one field that must be a non-empty string (an email must contain `@`). */
function requiredIssue(field: string, value: unknown): string | undefined {
  if (value === undefined) return 'required';
  if (typeof value !== 'string') return 'must_be_string';
  if (value.trim() === '') return 'must_not_be_empty';
  if (field === 'email' && !value.includes('@')) return 'invalid_email';
  return undefined;
}

/**
 * The server-set field an update may change: `owner_id` (a non-empty string; who may set whom is
 * auth.ts). The sandbox's own rule: READ_ONLY_FIELDS stays the create rule the importer shares.
 */
export const UPDATABLE_READ_ONLY = 'owner_id';

/** Problems of a create (`partial` false) or update (`partial` true) body, [] when valid. */
export function recordIssues(def: ResourceDef, body: ApiRecord, partial: boolean): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const field of READ_ONLY_FIELDS) {
    if (!(field in body)) continue;
    const issue = partial && field === UPDATABLE_READ_ONLY ? requiredIssue(field, body[field]) : 'read_only';
    if (issue) details.push({ field, issue });
  }
  for (const field of def.required) {
    if (partial && !(field in body)) continue;
    const issue = requiredIssue(field, body[field]);
    if (issue) details.push({ field, issue });
  }
  return details;
}

/** The fields of a valid create/update body, or a 422 VALIDATION_FAILED. */
export function validateRecord(def: ResourceDef, body: unknown, partial: boolean): ApiRecord {
  const fields = requireObject(body);
  const details = recordIssues(def, fields, partial);
  if (details.length > 0) throw failed(details);
  return fields;
}

/** A non-empty string field of a link or association body. */
export function requireIdField(body: ApiRecord, field: string): string {
  const issue = requiredIssue(field, body[field]);
  if (issue) throw failed([{ field, issue }]);
  return body[field] as string;
}
