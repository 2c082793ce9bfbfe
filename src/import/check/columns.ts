// The column check of the check and match stages (issue 18): a file's columns against the fields the CRM's records
// have, before anything is sent. A column whose field no record has and that is near a field one has is refused: a
// likely mistake (`E-mail Address` fills `e_mail_address`, not `email`), which would otherwise fail on every row or
// fill a field nobody reads. Near in spelling and in kind (issue 29): a hint is a command someone will paste, so a
// field whose records hold another kind than the column's values (`Zip` → `vip`, a true/false field) is never
// offered. A column near no known field is a new custom field: a warning only, with how to name it or leave it out.
// A column given by --map is the user's word: never refused.
import { UsageError } from '../../http/errors.js';
import { READ_ONLY_FIELDS } from '../../api/resources.js';
import type { ImportDeps } from '../types.js';
import type { RowOperation } from '../shapes.js';
import {
  type ColumnMap,
  type HeaderMapping,
  isCrmOwnKey,
  mapFlag,
  normalizeFieldName,
  splitType,
} from '../input/header.js';
import { nearestTypo } from '../../util/nearest.js';
import type { ValueKinds } from './value-kinds.js';

export { mapFlag } from '../input/header.js';

export interface ColumnField {
  column: string;
  field: string;
  mapped: boolean;
}

/** A column whose field no record has; `nearest`: the known field it is likely meant to be. */
export interface UnknownColumn {
  column: string;
  field: string;
  nearest?: string;
}

/**
 * The columns (not given by --map) whose field is not among `known`, each with the nearest known field if one is
 * close and holds the kind the column's values can be sent as (`values.kinds`: the file's, `values.sample`: a value of
 * the kind the records hold a field as; without one, as text).
 */
export function checkColumns(
  columns: readonly ColumnField[],
  known: ReadonlySet<string>,
  values: { kinds: ValueKinds; sample?: (field: string) => unknown },
): { unknown: UnknownColumn[] } {
  // a field the server sets is never suggested: a create leaves such a column out anyway
  const names = [...known].filter((f) => !READ_ONLY_FIELDS.includes(f));
  const unknown: UnknownColumn[] = [];
  for (const c of columns) {
    if (c.mapped || known.has(c.field)) continue;
    const fitting = names.filter((f) => values.kinds.fits(c.field, values.sample?.(f)));
    const nearest = nearestField(c.field, fitting);
    unknown.push(
      nearest === undefined ? { column: c.column, field: c.field } : { column: c.column, field: c.field, nearest },
    );
  }
  return { unknown };
}

const squash = (s: string): string => s.toLowerCase().replace(/[^\p{L}\p{M}\p{N}]+/gu, '');

/** `id`, `company_id`, `Company ID`, `companyId`: a name of an id (not `paid`). */
export const namesId = (name: string): boolean => /(^|[^\p{L}])id$/iu.test(name) || /\p{Ll}Id$/u.test(name);

/**
 * The known field `field` is likely meant to be: the same letters apart from case and separators (`e_mail` →
 * `email`), a typo (`emial`; a short name's only with its letters kept, never `zip` → `vip`), or whole words at its
 * start or end (`e_mail_address` → `email`, `job_title` → `title`), the longest such field first; an id field
 * (`company_id`) only for a column naming an id.
 */
export function nearestField(field: string, known: readonly string[]): string | undefined {
  const bySquashed = new Map<string, string>();
  // an id field only for a column that names an id: `Company` (names) → `company_id` wrote names over ids
  const ids = namesId(field);
  for (const k of known)
    if (k !== field && namesId(k) === ids && !bySquashed.has(squash(k))) bySquashed.set(squash(k), k);
  const whole = squash(field);
  if (whole === '') return undefined;
  const same = bySquashed.get(whole);
  if (same !== undefined) return same;
  const typo = nearestTypo(whole, [...bySquashed.keys()]);
  if (typo !== undefined) return bySquashed.get(typo);
  const words = field.split(/[^\p{L}\p{M}\p{N}]+/u).filter((w) => w !== '');
  for (let n = words.length - 1; n >= 1; n--) {
    for (const part of [words.slice(0, n), words.slice(words.length - n)]) {
      const s = squash(part.join(''));
      const hit = s.length >= 3 ? bySquashed.get(s) : undefined;
      if (hit !== undefined) return hit;
    }
  }
  return undefined;
}

/** A CSV header's sent columns (an update's `skip`, its id, left out), or an NDJSON file's keys, as checkColumns takes them. */
export function columnFields(
  source: { mapping?: HeaderMapping; ndjsonKeys: readonly string[] },
  maps: ColumnMap,
  skip: readonly string[] = [],
): ColumnField[] {
  const out: ColumnField[] = source.mapping
    ? source.mapping.columns
        .filter((c) => !c.ignored)
        .map((c) => ({ column: c.column.trim(), field: c.field, mapped: c.mapped === true }))
    : source.ndjsonKeys
        .filter((k) => maps.get(k) !== '' && (maps.has(k) || (!isCrmOwnKey(k) && !READ_ONLY_FIELDS.includes(k))))
        .map((k) => ({ column: k, field: splitType(maps.get(k) ?? k).name, mapped: maps.has(k) }));
  return out.filter((c) => !skip.includes(c.field));
}

/**
 * What the check means for the run: a UsageError (exit 2, nothing sent) naming every column near a known field,
 * with the --map to use; else a warning naming the new fields, if any, and how to name a field or leave a column out.
 */
export function columnsVerdict(
  unknown: readonly UnknownColumn[],
  where: { resource: string; name: string; csv: boolean; dryRun?: boolean },
): { error?: UsageError; warning?: string } {
  const line = (u: UnknownColumn, tail: string): string =>
    `  ${JSON.stringify(u.column)} (field ${u.field}): no ${where.resource} record has it${tail}`;
  // a typo is a CSV header's: an NDJSON file's keys are a program's (a backup's fields no other record has yet)
  const near = where.csv ? unknown.filter((u) => u.nearest !== undefined) : [];
  if (near.length > 0) {
    const one = near.length === 1;
    const first = near[0]!;
    return {
      error: new UsageError(
        `${where.name}: ${one ? 'a column fills a field' : `${near.length} columns fill fields`} that no ${where.resource} record has, ` +
          `${one ? '' : 'each '}near one that does; nothing was sent:\n` +
          near.map((u) => line(u, `;\n    did you mean ${u.nearest}? use ${mapFlag(u.column, u.nearest!)}`)).join('\n'),
        {
          hint:
            `if the field is new, say so: ${mapFlag(first.column, first.field)} sends the column as it is ` +
            `(a column given with --map is never refused), ${mapFlag(first.column, '')} leaves it out` +
            (where.dryRun ? '' : '; --dry-run shows how every column maps'),
        },
      ),
    };
  }
  if (unknown.length === 0) return {};
  const one = unknown.length === 1;
  const first = unknown[0]!;
  return {
    warning:
      `${where.name}: ${one ? 'a column fills a field' : `${unknown.length} columns fill fields`} that no ${where.resource} record has yet, ` +
      `sent as ${one ? 'a new field' : 'new fields'}:\n${unknown.map((u) => line(u, ' yet')).join('\n')}\n` +
      `  to fill a field the records have: ${mapFlag(first.column, 'FIELD')}; to leave the column out: ${mapFlag(first.column, '')}`,
  };
}

/**
 * Columns --map sends to a field of ids (`company_id`) that do not name an id (`Company`): each cell goes as an id,
 * and names there are not ids (issue 29's re-trial: a pasted `--map "Company=company_id"` wrote company names over
 * the records' ids). A warning: a --map is the user's word.
 */
export function idsFromNames(columns: readonly ColumnField[], name: string): string | undefined {
  const odd = columns.filter((c) => c.mapped && namesId(c.field) && !namesId(c.column));
  if (odd.length === 0) return undefined;
  const which = odd.map((c) => `${JSON.stringify(c.column)} fills ${c.field}`).join(', ');
  return (
    `${name}: ${which}, a field of ids: each cell is sent as an id, and a name is not one; ` +
    `if the column holds names, send it to another field (${mapFlag(odd[0]!.column, 'FIELD')})`
  );
}

/** A create's or an update's columns (an update's id left out) against the fields the CRM has, just before the send pass. */
export async function checkRunColumns(
  o: { op?: RowOperation; maps: ColumnMap; resource: string; name: string; dryRun?: boolean },
  scan: { mapping?: HeaderMapping; ndjsonKeys: readonly string[]; kinds: ValueKinds },
  deps: Pick<ImportDeps, 'knownFields' | 'warn'>,
): Promise<void> {
  const { op } = o;
  if (!deps.knownFields || (op && op.kind !== 'update')) return;
  const known = await deps.knownFields();
  if (!known || known.size === 0) return;
  const values = { kinds: scan.kinds, sample: (f: string) => known.sample?.(f) };
  const columns = columnFields(scan, o.maps, op?.required);
  const ids = idsFromNames(columns, o.name);
  if (ids) deps.warn?.(ids);
  const { unknown } = checkColumns(columns, known, values);
  const verdict = columnsVerdict(unknown, { ...o, csv: scan.mapping !== undefined });
  if (verdict.error) throw verdict.error;
  if (verdict.warning) deps.warn?.(verdict.warning);
}

/**
 * The fields of a CSV header, or refused (exit 2) when a match field is not among them, as soon as the header is
 * read (a 200,000-row file is not read first): the hint names the
 * fields to match on when it can tell them (a column --map sends as another field is matched by that field:
 * `--match "Email Address" --map "Email Address=email"` → `--match email`; a typo → the field it is near).
 */
export async function checkMatchColumns(
  mapping: HeaderMapping | undefined,
  fields: readonly string[],
  name: string,
  knownFields?: () => Promise<ReadonlySet<string> | undefined>,
): Promise<void> {
  if (!mapping) return; // NDJSON: a row without the field is invalid (MISSING_KEY)
  const sent = mapping.columns.filter((c) => !c.ignored);
  const have = sent.map((c) => c.field);
  const lacking = fields.filter((f) => !have.includes(f));
  if (lacking.length === 0) return;
  // the records' fields (one page) read only for the hint: a run that goes on reads nothing more
  const known = await knownFields?.();
  // --match is read as a header is (`Email Address` → email_address): a column of that name --map sends as a field
  const mapped = (f: string) => sent.find((c) => c.mapped && normalizeFieldName(splitType(c.column.trim()).name) === f);
  // a column's field near the one asked for: a typo in --match when the records have the column's field; a
  // column named otherwise than the field when they have the one asked for (`Mail` holding email). A hint
  // is pasted: matching on a field no record has would create every row again, so with neither known, none.
  const near = (f: string) => nearestTypo(f, have);
  const typo = (f: string) => (known?.has(f) === false && known.has(near(f) ?? '') ? near(f) : undefined);
  const meant = (f: string) => (have.includes(f) ? f : (mapped(f)?.field ?? typo(f)));
  const all = fields.map(meant);
  const match = all.every((f) => f !== undefined) ? `--match ${[...new Set(all)].join(',')}` : undefined;
  const byMap = lacking.flatMap((f) => {
    const c = mapped(f);
    return c ? [`--map sends ${JSON.stringify(c.column.trim())} as ${c.field}`] : [];
  });
  const renamed = lacking.flatMap((f) => {
    const c = known?.has(f) ? sent.find((col) => col.field === near(f) && !known.has(col.field)) : undefined;
    return c ? [mapFlag(c.column.trim(), f)] : [];
  });
  const columns = sent.map((c) => JSON.stringify(c.column.trim())).join(', ');
  throw new UsageError(
    `${name} has no column for ${lacking.map((f) => `"${f}"`).join(', ')}, which --match names; nothing was sent`,
    {
      hint:
        match && byMap.length > 0
          ? `--match names fields, not columns: ${byMap.join(', ')}; use ${match}`
          : match
            ? `did you mean ${match}? the records have that field`
            : renamed.length === lacking.length
              ? `the records have ${lacking.join(', ')}: if ${renamed.length === 1 ? 'that column holds it' : 'those columns hold them'}, add ${renamed.join(' ')}`
              : // no column is named for it: never a guess (a wrong key column would create every row again)
                `name the column that holds ${lacking[0]} with --map "COLUMN=${lacking[0]}"; the file's columns: ${columns}`,
    },
  );
}
