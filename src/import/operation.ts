// What one row of a bulk update, delete or link file becomes (issue 12): one request per row, built and
// checked by a pure function, so the first pass refuses a row that cannot be sent before anything is.
import type { ApiRecord } from '../api/envelopes.js';
import { findAssociation, findLink } from '../api/links.js';
import { findResource, type LinkField } from '../api/resources.js';
import { UsageError } from '../http/errors.js';
import { pathSegment, recordPath } from '../http/url.js';
import { normalizeFieldName, splitType, type ColumnMap } from './input/header.js';
import type { RowOperation, RowPlan } from './shapes.js';
export type { OperationKind, RowOperation, RowPlan, RowRequest } from './shapes.js';

export const OPERATION_CODES = {
  missing: 'MISSING_ID',
  empty: 'EMPTY_ROW',
  value: 'INVALID_VALUE',
  field: 'UNKNOWN_FIELD',
} as const;

const bad = (code: string, reason: string, field = ''): RowPlan => ({ ok: false, code, reason, field });

/** A cell naming a record: a non-empty string (a number as its digits). */
function idOf(record: ApiRecord, field: string): string | undefined {
  const v = record[field];
  const s = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : undefined;
  return s === '' || s === '.' || s === '..' ? undefined : s;
}

const missing = (field: string): RowPlan => bad(OPERATION_CODES.missing, `the row has no ${field}`, field);

/** `PATCH /{resource}/{id}` with every other field of the row. */
export function updateOperation(resource: string): RowOperation {
  return {
    ...{ kind: 'update', done: 'updated', name: resource, keep: ['id', 'owner_id'], required: ['id'] },
    describe: `update ${resource}`,
    tag: 'update',
    goneIsDone: false,
    plan(record) {
      const id = idOf(record, 'id');
      if (id === undefined) return missing('id');
      const body = Object.fromEntries(Object.entries(record).filter(([k]) => k !== 'id'));
      if (Object.keys(body).length === 0)
        return bad(OPERATION_CODES.empty, 'the row has no field to change (only an id)');
      return { ok: true, request: { method: 'PATCH', path: recordPath(resource, id), body, target: id, subject: id } };
    },
  };
}

/** `DELETE /{resource}/{id}`; the row's other cells are not sent. */
export function deleteOperation(resource: string): RowOperation {
  return {
    ...{ kind: 'delete', done: 'deleted', name: resource, keep: ['id'], required: ['id'], bare: 'id' },
    describe: `delete ${resource}`,
    tag: 'delete',
    goneIsDone: true,
    plan(record) {
      const id = idOf(record, 'id');
      if (id === undefined) return missing('id');
      return { ok: true, request: { method: 'DELETE', path: recordPath(resource, id), target: id, subject: id } };
    },
  };
}

/** The column naming the parent in a file of pairs: `deal_id`, `meeting_id`. */
export function parentField(parent: string): string {
  return `${findResource(parent)?.singular ?? parent}_id`;
}

/** An allowed value in any case (`decision-maker`) → the field's own spelling; undefined when not allowed. */
export function choiceOf(field: LinkField, value: string): string | undefined {
  if (!field.values) return value;
  const want = value
    .trim()
    .replace(/[-\s]+/g, '_')
    .toUpperCase();
  return field.values.find((v) => v.toUpperCase() === want);
}

/**
 * A link (`POST /{parent}/{id}/{relation}`) or a meeting association (`PUT /meetings/{id}/{name}`) per
 * row: the parent from the row's `<singular>_id` column, or `parentId` for every row.
 */
export function linkOperation(parent: string, relation: string, parentId?: string): RowOperation {
  const link = findLink(parent, relation);
  const assoc = link ? undefined : findAssociation(parent, relation);
  if (!link && !assoc) throw new UsageError(`unknown link '${parent} ${relation}'`);
  const childKey = link ? link.childKey : assoc!.bodyKey;
  const fields = link?.fields ?? [];
  const pField = parentField(parent);
  const required = parentId === undefined ? [pField, childKey] : [childKey];
  const allowed = [...required, ...fields.map((f) => f.name)];
  return {
    ...{
      kind: 'link',
      done: 'linked',
      name: `${parent} ${relation}`,
      keep: [],
      required,
      bare: parentId === undefined ? undefined : childKey,
    },
    allowed,
    ...(parentId === undefined ? {} : { parentPath: `/${parent}/${pathSegment(parentId)}` }),
    describe: `link ${parent} ${relation}${parentId === undefined ? '' : ` ${parentId}`}`,
    tag: [
      'link',
      parent,
      relation,
      ...(parentId === undefined ? [] : [parentId.replace(/[^\w.-]/g, '_').slice(0, 40)]),
    ].join('-'),
    goneIsDone: false,
    plan(record) {
      const pid = parentId ?? idOf(record, pField);
      if (pid === undefined) return missing(pField);
      const child = idOf(record, childKey);
      if (child === undefined) return missing(childKey);
      const unknown = Object.keys(record).find((k) => !allowed.includes(k));
      if (unknown !== undefined)
        return bad(OPERATION_CODES.field, `"${unknown}" is not a field of a ${parent} ${relation} link`, unknown);
      const body: ApiRecord = { [childKey]: child };
      for (const f of fields) {
        const given = record[f.name];
        const value =
          given === undefined || given === null ? f.default : typeof given === 'string' ? given : JSON.stringify(given);
        if (value === undefined) continue;
        const choice = choiceOf(f, value);
        if (choice === undefined)
          return bad(
            OPERATION_CODES.value,
            `${f.name} ${JSON.stringify(value)} is not one of ${f.values!.join(', ')}`,
            f.name,
          );
        body[f.name] = choice;
      }
      const path = `/${parent}/${pathSegment(pid)}/${relation}`;
      // a link is its parent and child; a meeting's association (PUT) is the whole list
      const subject = link ? `${pid}\0${child}` : pid;
      return { ok: true, request: { method: link ? 'POST' : 'PUT', path, body, target: pid, subject } };
    },
  };
}

/** The fields a file's header lacks or has too many of, as a usage error; undefined when it fits. */
export function checkHeaderFields(op: RowOperation, fields: readonly string[], file: string): UsageError | undefined {
  const lacking = op.required.filter((f) => !fields.includes(f));
  if (lacking.length > 0) {
    return new UsageError(
      `${file} has no ${lacking.map((f) => `"${f}"`).join(' or ')} column, which every row of ${op.kind} ${op.name} needs`,
      {
        hint: op.required.includes('id')
          ? 'name the id column with --id-column NAME'
          : `rename the column, or use --map "COLUMN=${lacking[0]}"`,
      },
    );
  }
  const extra = op.allowed ? fields.filter((f) => !op.allowed!.includes(f)) : [];
  if (extra.length === 0) return undefined;
  return new UsageError(
    `${file}: ${extra.map((f) => `"${f}"`).join(', ')} ${extra.length === 1 ? 'is not a field' : 'are not fields'} of a ${op.name} link`,
    {
      hint: `a row may have ${op.allowed!.join(', ')}; --map "COLUMN=" leaves a column out`,
    },
  );
}

/**
 * For a file that may be bare values (`bare`): the header to read its first line under when that line is
 * one cell naming no column (not the field itself, nor any `…id` name, a `--map`ped column or a `_` column).
 */
export function bareHeader(
  op: RowOperation | undefined,
  maps: ColumnMap,
): ((first: readonly string[]) => string[] | undefined) | undefined {
  const field = op?.bare;
  if (field === undefined) return undefined;
  return (first) => {
    const cell = first.length === 1 ? first[0]!.trim() : undefined;
    if (cell === undefined || cell === '' || cell.startsWith('_') || maps.has(cell)) return undefined;
    // `id`, `contact_id`, `Record ID`: a column name (a missing column is then named), not an id
    const name = normalizeFieldName(splitType(cell).name);
    return name === field || name === 'id' || name.endsWith('_id') ? undefined : [field];
  };
}
