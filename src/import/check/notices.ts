// The check stage's notices (check.ts): what the pass over the file leaves out or sends otherwise than a reader might
// expect, said once on stderr: rows repeating an earlier row, text columns whose cells all read as values, columns
// the server sets itself or that begin with `_`, placeholder rows of a fed-back rejects file.
import { plural } from '../../output/plural.js';
import { READ_ONLY_FIELDS } from '../../api/resources.js';
import { type HeaderMapping, isCrmOwnKey, mapFlag, splitType } from '../input/header.js';
import type { Typing } from '../input/typing.js';
import type { ValueKinds } from './value-kinds.js';
import type { ImportDeps } from '../types.js';
import type { RowOperation } from '../shapes.js';
import type { ColumnMap } from '../input/header.js';

/** The check pass's options the notices read (check.ts ScanOptions). */
interface NoticeOptions {
  name: string;
  maps: ColumnMap;
  warn?: (message: string) => void;
  op?: RowOperation;
  rowsOnly?: boolean;
  knownFields?: ImportDeps['knownFields'];
  keep?: readonly string[];
}

/** What the pass counted that the notices name. */
export interface Noticed {
  repeated: number;
  firstRepeats: ReadonlyArray<readonly [number, number]>;
  typing: Typing;
  kinds: ValueKinds;
  keys: ReadonlySet<string>;
  placeholders: readonly number[];
}

/** Rows of a create repeating an earlier one: each named (the first five), skipped. */
export function warnRepeated(o: NoticeOptions, t: Noticed): void {
  if (t.repeated === 0) return;
  const named = t.firstRepeats.map(([line, first]) => `  line ${line} repeats line ${first}: skipped`);
  const more = t.repeated > named.length ? [`  … and ${plural(t.repeated - named.length, 'more repeated row')}`] : [];
  o.warn?.(
    `${o.name}: ${plural(t.repeated, 'row repeats', 'rows repeat')} an earlier row exactly and ${t.repeated === 1 ? 'is' : 'are'} not sent ` +
      `(counted as skipped: the earlier row creates the record once):\n${[...named, ...more].join('\n')}`,
  );
}

/**
 * The one warning naming the rows that repeated an earlier row exactly (an update, delete or link row of its record; a
 * reconcile's row of its key): `r` their lines and the earlier line each repeats (the first few, when `n` says how many).
 */
export function repeatsWarning(r: ReadonlyArray<readonly [line: number, earlier: number]>, n = r.length): string {
  const which = r.slice(0, 5).map(([line, earlier]) => `line ${line} repeats line ${earlier}`);
  const one = n === 1;
  return (
    `${plural(n, 'row')} ${one ? 'repeats' : 'repeat'} an earlier row exactly and ${one ? 'is' : 'are'} not sent ` +
    `(counted as skipped): ${which.join(', ')}${n > 5 ? ', …' : ''}`
  );
}

/**
 * A create's text columns every cell of which reads as a number, boolean, list or object, with no record to show
 * their field's kind (an empty collection, records that disagree): sent as text, as the rule says (`00501` stays
 * text) — said, with the header type that sends them as values (issue 28's trial: an export created into an empty
 * CRM turned every number and boolean into text without a word).
 */
export async function warnSentAsText(o: NoticeOptions, mapping: HeaderMapping | undefined, t: Noticed): Promise<void> {
  // a dry run reads nothing: its plan says the rule (plan-text.ts typingLines)
  if (o.op || o.rowsOnly || !mapping || !o.knownFields) return;
  const typed = new Set(t.typing.map(([f]) => f));
  const text = mapping.columns.filter((c) => !c.ignored && c.type === 'string' && !typed.has(c.field));
  const candidates = text.flatMap((c) => {
    const kind = t.kinds.alsoReadsAs(c.field);
    return kind ? [{ c, kind: kind === 'list' || kind === 'object' ? 'json' : kind }] : [];
  });
  if (candidates.length === 0) return;
  // a field the records hold as text is text: nothing to say
  const known = await o.knownFields?.();
  const found = candidates.filter(({ c }) => !known?.has(c.field) || known.mixed?.(c.field) === true);
  if (found.length === 0) return;
  const shown = found.slice(0, 4).map(({ c, kind }) => `${c.column.trim()}:${kind}`);
  const one = found.length === 1;
  o.warn?.(
    `${o.name}: ${plural(found.length, 'column')} whose every cell reads as a value ${one ? 'is' : 'are'} sent as text ` +
      `(${shown.join(', ')}${found.length > 4 ? ', …' : ''}): the CRM's records show no one kind for ${one ? 'its field' : 'their fields'}; ` +
      `to send values, type the header as shown (or import an -o ndjson export, which keeps them)`,
  );
}

/**
 * Notices: columns the server sets itself, left out (a reconcile keeps owner_id for its updates: not said);
 * `_` columns that are not crm's own, left out (a field `__proto__` no record has); placeholder rows of a
 * fed-back rejects file, skipped.
 */
export function warnLeftOut(o: NoticeOptions, mapping: HeaderMapping | undefined, t: Noticed): void {
  const kept = o.op?.keep ?? o.keep ?? [];
  const readOnly = mapping
    ? mapping.columns.filter((c) => c.readOnly).map((c) => c.column.trim())
    : READ_ONLY_FIELDS.filter((f) => t.keys.has(f) && !o.maps.has(f) && !kept.includes(f));
  const underscored = (mapping?.columns ?? [])
    .filter((c) => c.ignored && !c.readOnly && !c.mapped && !isCrmOwnKey(splitType(c.column.trim()).name.trim()))
    .map((c) => c.column.trim());
  if (underscored.length > 0)
    o.warn?.(
      `${o.name}: leaving out ${underscored.map((c) => JSON.stringify(c)).join(', ')}: a column whose name begins with _ ` +
        `is not sent unless the records have that field (crm's own files add such columns); ` +
        `${mapFlag(underscored[0]!, splitType(underscored[0]!).name.trim())} sends it as that field`,
    );
  const one = readOnly.length === 1;
  // a delete or link reads only its id columns; an update says what it does not change
  if (readOnly.length > 0 && o.op?.kind === 'update') {
    o.warn?.(
      `${o.name}: not changing ${readOnly.join(', ')}: the server sets ${one ? 'this field' : 'these fields'} itself`,
    );
  } else if (readOnly.length > 0 && !o.op) {
    o.warn?.(
      `${o.name}: leaving out ${readOnly.join(', ')}: the server sets ${one ? 'this field' : 'these fields'} itself ` +
        `(an exported list has them); --map "${readOnly[0]}=FIELD" sends ${one ? 'it' : 'one'} as another field`,
    );
  }
  const p = t.placeholders;
  if (p.length === 0) return;
  const many = p.length > 1;
  o.warn?.(
    `${o.name}: ${plural(p.length, 'RECORD_TOO_LARGE row')} (${many ? 'lines' : 'line'} ${p.slice(0, 5).join(', ')}${p.length > 5 ? ', …' : ''}) ` +
      `${many ? 'hold' : 'holds'} no cells and ${many ? 'are' : 'is'} skipped: ` +
      `the _error_message says how to import ${many ? 'each' : 'it'} from the original file`,
  );
}
