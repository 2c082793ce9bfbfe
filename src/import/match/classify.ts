// One row against the records that share its key (`--match`, CONTRACT §7b): create, update (only the fields
// that differ), unchanged or ambiguous; and a change's text for the plan file. Pure.
import { RawNumber, stringifyJson } from '../../json/exact-json.js';
import { asHeldType } from '../input/typing.js';
import { truncate } from '../../output/cell.js';
import { isCaseFreeField } from './key.js';

/** One field an update changes: the record's value (`null` when absent) and the value to send. */
export interface Change {
  field: string;
  before: unknown;
  after: unknown;
}

export type Action = 'create' | 'update' | 'unchanged' | 'ambiguous';

export interface Classified {
  action: Action;
  /** the matched record's id (update, unchanged) */
  id?: string;
  changes: Change[];
  /** the ids of the records sharing the key, sorted (ambiguous) */
  candidates?: string[];
}

/** The fields whose values are a CSV's text cells (an untyped column): read as the record's type, compared trimmed. */
export type TextFields = (field: string) => boolean;

/** 0 candidates: create; 2 or more: ambiguous; 1: update with its changes, or unchanged when none. */
export function classify(
  row: Record<string, unknown>,
  candidates: readonly { id: string; record: Record<string, unknown> }[],
  skip: readonly string[],
  text: TextFields = () => true,
): Classified {
  const [only] = candidates;
  if (only === undefined) return { action: 'create', changes: [] };
  if (candidates.length > 1)
    return { action: 'ambiguous', changes: [], candidates: candidates.map((c) => c.id).sort() };
  const changes = diffRecord(row, only.record, skip, text);
  return { action: changes.length > 0 ? 'update' : 'unchanged', id: only.id, changes };
}

/**
 * The row's fields (in its order, `skip` left out) whose value differs from the record's. An absent or blank text
 * cell leaves the field as it is; an explicit null clears it (a change unless the record's is null or absent). A
 * typed value (a `:json` column, an undo file's, NDJSON) is compared and sent exactly: `" x "`, `""`, `"00501"`.
 * Values are never compared as keys are (key.ts: NFC, an email's case folded): a file's `José` in NFC where the
 * record holds it in NFD, or an email re-cased, is a change the file asks for.
 */
export function diffRecord(
  row: Record<string, unknown>,
  record: Record<string, unknown>,
  skip: readonly string[],
  text: TextFields = () => true,
): Change[] {
  const changes: Change[] = [];
  for (const [field, value] of Object.entries(row)) {
    const isText = typeof value === 'string' && text(field);
    if (skip.includes(field) || value === undefined || (isText && value.trim() === '')) continue;
    // own values only: a field named `constructor` is not Object's
    const before = Object.hasOwn(record, field) ? (record[field] ?? null) : null;
    const same = value === null ? before === null : isText ? sameText(value, before, field) : deepEqual(value, before);
    if (!same) changes.push({ field, before, after: isText ? valueToSend(value, before) : value });
  }
  return changes;
}

/**
 * A text cell against the record's value: text by its code points, trimmed (an email's or domain's case aside: one address,
 * and a reconcile by id rewrote `ann@x.io` as `ANN@x.io`, issue 29's trial); else read as the record's type.
 */
function sameText(cell: string, held: unknown, field: string): boolean {
  const fold = (t: string) => (isCaseFreeField(field) ? t.trim().toLowerCase() : t.trim());
  if (typeof held === 'string') return fold(cell) === fold(held);
  const typed = asHeldType(cell, held);
  return typed !== undefined && deepEqual(typed, held);
}

/**
 * The value sent for a row's value: a text cell as the type the record holds when it reads as one (an exported list's
 * `20`, `false`, `{"city":"Paris"}`), else the text trimmed — compared trimmed, so sent trimmed: a create never stores
 * `" ada@x.test "` that a later run counts as equal and leaves. `strict` (a create, typed by what other records hold):
 * a number only as JSON writes it, so `00501` stays text.
 */
export function valueToSend(cell: unknown, held: unknown, strict = false): unknown {
  return typeof cell === 'string' ? (asHeldType(cell, held, strict) ?? cell.trim()) : cell;
}

/** JSON values equal: numbers by value, objects' keys in any order, arrays in order. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof RawNumber || b instanceof RawNumber)
    return a instanceof RawNumber && b instanceof RawNumber && a.text === b.text;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  const ak = Object.keys(a);
  const bo = b as Record<string, unknown>;
  return (
    ak.length === Object.keys(bo).length &&
    ak.every((k) => Object.hasOwn(bo, k) && deepEqual((a as Record<string, unknown>)[k], bo[k]))
  );
}

const MAX_VALUE = 80;

/** `title: "CTO" → "CEO"`: each value's JSON cut at 80 characters (never inside a surrogate pair). */
export function changeText(c: Change): string {
  const show = (v: unknown): string => truncate(stringifyJson(v ?? null) ?? 'null', MAX_VALUE);
  return `${c.field}: ${show(c.before)} → ${show(c.after)}`;
}

/** Several changes for the plan file's `_changes` column, joined with `; `. */
export function changesText(changes: readonly Change[]): string {
  return changes.map(changeText).join('; ');
}
