// The match stage of reconcile (`--match`, CONTRACT §7b), read top to bottom: the check pass's rows (one per
// spool entry) → their keys (a later row with a key is a repeat when it is the key's first row exactly, else a
// duplicate, and then no row of that key is sent: the file disagrees with itself) → what the CRM holds for those keys
// (the read: memory bounded by the file, not the collection) → one action per row, written to the plan spool
// that the sending pass reads (creates in chunks, updates one row each, the rest settled) and to `--plan FILE`.
import type { ApiRecord } from '../../api/envelopes.js';
import { dirname } from 'node:path';
import { HashTable } from '../../util/hash-table.js';
import { FirstSeen } from '../../util/first-seen.js';
import { stringifyJson } from '../../json/exact-json.js';
import { count, plural } from '../../output/plural.js';
import { Chunker } from '../check/chunker.js';
import type { MatchIndex, MatchPlan, MatchRead } from '../types.js';
import { planColumn, type ColumnMap } from '../input/header.js';
import { checkColumns, columnFields, columnsVerdict, idsFromNames } from '../check/columns.js';
import type { RawRow } from '../input/reader.js';
import type { ScanResult } from '../check/check.js';
import type { Spool, SpoolEntry, SpooledChunk } from '../check/spool.js';
import { changesText, classify, valueToSend, type Change, type TextFields } from './classify.js';
import { READ_ONLY_FIELDS } from '../../api/resources.js';
import { DUPLICATE_KEY, MISSING_KEY, NO_ID, NOT_FOUND } from '../shapes.js';
import { setOwn } from '../../util/set-own.js';
import { keyPart, matchKey } from './key.js';
import { GET_ROWS_MAX } from './read.js';
import type { PlanFile } from '../files/way-back.js';
import { repeatsWarning } from '../check/check.js';

export interface MatchRowsOptions {
  resource: string;
  fields: readonly string[];
  /** the check pass's rows */
  rows: Spool;
  /** where the plan goes (undefined: a dry run, counted only) */
  out?: Spool;
  /** `--plan FILE` */
  planFile?: PlanFile;
  read: (req: MatchRead) => Promise<MatchIndex>;
  chunkSize: number;
  signal?: AbortSignal;
  /** the column maps, and the input's name (messages) */
  maps: ColumnMap;
  name: string;
  warn?: (message: string) => void;
  /** a job an interrupted run began (match.ts): what it did */
  earlier?: EarlierRun;
  /** a dry run: gets the line of each row planned as a create (a records file's links count only those as new) */
  creates?: Set<number>;
}

/** What an interrupted run of the job did (match.ts reads it from its plan and journal). */
export interface EarlierRun {
  /** lines whose record it changed or created: counted done if the CRM still agrees, planned again if not */
  touched: ReadonlySet<number>;
  /** creates it sent without an answer, by their first line: sent again whole, under its key */
  inDoubt: ReadonlyMap<number, SpooledChunk>;
  /** the lines of those creates */
  lines: ReadonlySet<number>;
}

/** The row's record and its raw values, for a valid row of the check pass (a chunk of one). */
const rowOf = (e: SpoolEntry): { line: number; record: ApiRecord; raw: RawRow } | undefined =>
  e.chunk ? { line: e.chunk.lines[0]!, record: e.chunk.records()[0]!, raw: e.chunk.raws()[0]! } : undefined;

export async function matchRows(o: MatchRowsOptions, scan: ScanResult): Promise<MatchPlan> {
  // 1. the file's keys: the first line of each (a later row with it is a duplicate); the keys on disk beside the
  // spool, their hashes in a table whose second column the index uses for its records (../../util/first-seen.ts)
  const first = new FirstSeen(dirname(o.rows.path), new HashTable(2));
  // and each row's record, by its JSON (as a plain import's check compares them): the line it first came on
  const records = new FirstSeen(dirname(o.rows.path));
  try {
    return await readAndPlan(o, scan, { first, records });
  } finally {
    first.close();
    records.close();
  }
}

/** The lines the file's keys (`first`) and rows (`records`, rowText) first came on; the keys whose rows disagree. */
export interface FirstLines {
  first: FirstSeen;
  records: FirstSeen;
  /** a key's rows that are not all one row: their lines (the first few), none of them sent */
  conflicts?: Map<string, number[]>;
}

/** How many lines of a key's disagreeing rows a reason names. */
const CONFLICT_LINES = 5;

/**
 * A row as the match sees it: its record's JSON with each key cell as the key compares it (trimmed; an email in lower
 * case), so ` Ada@X.test ` pasted again as `ada@x.test`, the rest the same, is the same row, not a conflict.
 */
export function rowText(fields: readonly string[], record: ApiRecord): string {
  const keyed: ApiRecord = { ...record };
  for (const f of fields) if (Object.hasOwn(record, f)) setOwn(keyed, f, keyPart(f, record[f]) ?? record[f]);
  return stringifyJson(keyed)!;
}

/** Pass 1's look at a keyed row: its key's first line, and the key marked disagreeing when this row is another. */
export function seeRow(
  fields: readonly string[],
  row: { line: number; record: ApiRecord },
  key: string,
  lines: FirstLines,
) {
  const earlier = lines.first.seen(key, row.line);
  const same = lines.records.seen(rowText(fields, row.record), row.line);
  if (earlier === undefined || same === earlier) return earlier;
  const conflicts = (lines.conflicts ??= new Map<string, number[]>());
  const at = conflicts.get(key) ?? [earlier];
  if (at.length < CONFLICT_LINES && !at.includes(row.line)) at.push(row.line);
  conflicts.set(key, at);
  return earlier;
}

async function readAndPlan(o: MatchRowsOptions, scan: ScanResult, lines: FirstLines): Promise<MatchPlan> {
  const { first } = lines;
  const { fields } = o;
  const byId = fields.length === 1 && fields[0] === 'id';
  const ids: string[] = [];
  for await (const e of o.rows.entries()) {
    const row = rowOf(e);
    const key = row && matchKey(fields, row.record);
    if (key === undefined || seeRow(fields, row!, key, lines) !== undefined) continue;
    // one GET per id is chosen only for a small file (chooseRead): more ids are not needed
    if (byId && ids.length <= GET_ROWS_MAX) ids.push(keyPart('id', row!.record.id)!);
  }
  // 2. what the CRM holds for them
  const keep = scan.mapping ? scan.mapping.columns.filter((c) => !c.ignored).map((c) => c.field) : scan.ndjsonKeys;
  const index = await o.read({
    fields,
    keep,
    wanted: (k) => first.get(k) !== undefined,
    table: first.table,
    keys: first.size,
    dir: dirname(o.rows.path),
    ...(byId ? { ids } : {}),
  });
  try {
    // the columns against the fields the CRM's records have (check.ts): a near miss refused before anything is sent
    const columns = columnFields(scan, o.maps);
    const ids = idsFromNames(columns, o.name);
    if (ids) o.warn?.(ids);
    if (index.fieldsSeen.size > 0) {
      const values = { kinds: scan.kinds, sample: (f: string) => index.sample?.(f) };
      const verdict = columnsVerdict(checkColumns(columns, index.fieldsSeen, values).unknown, {
        resource: o.resource,
        name: o.name,
        csv: scan.mapping !== undefined,
        dryRun: o.out === undefined,
      });
      if (verdict.error) throw verdict.error;
      if (verdict.warning) o.warn?.(verdict.warning);
    }
    return await planRows(o, scan, index, lines);
  } finally {
    index.close?.();
  }
}

/** Pass 2: one action per row, in file order, to the plan spool and `--plan FILE`. */
async function planRows(
  o: MatchRowsOptions,
  scan: ScanResult,
  index: MatchIndex,
  lines: FirstLines,
): Promise<MatchPlan> {
  const { fields } = o;
  // 3. one action per row, in file order
  const mapping = scan.mapping ? { mapping: scan.mapping.columns.map(planColumn) } : {};
  const plan: MatchPlan = {
    ...mapping,
    ...{
      resource: o.resource,
      rows: scan.rows,
      read: readText(index),
      create: 0,
      update: 0,
      unchanged: 0,
      ambiguous: 0,
    },
    ...{ duplicate: 0, repeated: 0, invalid: 0, requests: 0, read_requests: index.requests, changes: {} },
    ...(index.ms !== undefined ? { read_ms: index.ms } : {}),
  };
  let seq = 0;
  const chunker = new Chunker(o.chunkSize, () => ++seq);
  // a CSV's untyped columns are text cells, read as the records' types; a typed value (`:json`, NDJSON) is exact
  const textFields = new Set(
    scan.mapping?.columns.filter((c) => !c.ignored && c.type === 'string').map((c) => c.field),
  );
  const text = (field: string): boolean => textFields.has(field);
  let [bytes, keptRows, keptChunks] = [0, 0, 0];
  /** the first few repeated rows' lines, for the warning */
  const repeats: Array<[line: number, earlier: number]> = [];
  const untyped: Untyped = new Map();
  for await (const e of o.rows.entries()) {
    if (o.signal?.aborted) break;
    bytes = e.bytes;
    let written: Promise<void> | undefined;
    const row = rowOf(e);
    if (e.invalid) {
      plan.invalid++;
      o.planFile?.add(e.invalid.line, 'invalid', undefined, `${e.invalid.code}: ${e.invalid.reason}`, e.invalid.raw);
      written = o.out?.invalid(e.invalid, e.bytes);
    } else if (row) {
      const at = inFile(fields, row, lines);
      if (!('first' in at)) written = setAside(o, plan, row, at, e.bytes, repeats);
      else if (o.earlier?.lines.has(row.line)) {
        const kept = o.earlier.inDoubt.get(row.line);
        if (kept)
          [written, keptRows, keptChunks] = [
            keepCreate(o, plan, { ...kept, seq: ++seq }, index, e.bytes),
            keptRows + kept.lines.length,
            keptChunks + 1,
          ];
      } else {
        const place = { index, chunker, nextSeq: () => ++seq, text, untyped };
        written = placeRow(o, plan, row, index.get(at.first), place, e.bytes);
      }
    }
    if (written) await written;
  }
  const last = chunker.flush();
  if (last) await o.out?.chunk(last, bytes);
  await o.out?.end(bytes);
  plan.requests = Math.ceil((plan.create - keptRows) / o.chunkSize) + keptChunks + plan.update;
  if (plan.repeated > 0) o.warn?.(repeatsWarning(repeats, plan.repeated));
  for (const [field, u] of untyped) o.warn?.(untypedWarning(o.resource, field, u));
  return plan;
}

/** A create's text cells that do not read as the kind the collection's records hold their field as, by field. */
type Untyped = Map<string, { n: number; line: number; cell: string; kind: string }>;

/** a kind the records hold a field as: one value of it, many, and the column type that reads it */
const KINDS: Record<string, [one: string, many: string, type: string]> = {
  number: ['a number', 'numbers', 'number'],
  boolean: ['true or false', 'true or false', 'boolean'],
  list: ['a list', 'lists', 'json'],
  object: ['an object', 'objects', 'json'],
};

/** Sent as text, as the file has it, and said (the re-trial: an amount "12k" stored as text among numbers, unsaid). */
function untypedWarning(
  resource: string,
  field: string,
  u: { n: number; line: number; cell: string; kind: string },
): string {
  const [one, many, type] = KINDS[u.kind]!;
  const cells = u.n === 1 ? '1 cell is' : `${u.n.toLocaleString('en-US')} cells are`;
  return (
    `${field}: ${cells} not ${one} where the ${resource} records hold ${many} (line ${u.line}: ${JSON.stringify(u.cell)}); ` +
    `created with it as text. To refuse such rows instead, type the column ${field}:${type}`
  );
}

/** Notes a create's text cells its field's kind does not read (untypedWarning). */
function noteUntyped(row: { line: number; record: ApiRecord }, index: MatchIndex, text: TextFields, untyped: Untyped) {
  for (const [field, value] of Object.entries(row.record)) {
    if (!text(field) || typeof value !== 'string' || value.trim() === '') continue;
    const sample = index.sample?.(field);
    if (sample === undefined || typeof valueToSend(value, sample, true) !== 'string') continue;
    const kind = Array.isArray(sample) ? 'list' : typeof sample;
    const u = untyped.get(field) ?? { n: 0, line: row.line, cell: value, kind };
    u.n++;
    untyped.set(field, u);
  }
}

/**
 * Where a row stands among the file's rows (pass 1 saw them all): the first with its key, that row again exactly, a
 * row of a key whose rows disagree (the first included: which one is right is not ours to guess), or no key.
 */
export type InFile = { first: string } | { repeats: number } | { conflicts: number[] } | { noKey: true };

export function inFile(fields: readonly string[], row: { line: number; record: ApiRecord }, seen: FirstLines): InFile {
  const key = matchKey(fields, row.record);
  if (key === undefined) return { noKey: true };
  const earlier = seen.first.get(key)!;
  const same = seen.records.get(rowText(fields, row.record));
  if (earlier !== row.line && same === earlier) return { repeats: earlier };
  const conflicts = seen.conflicts?.get(key);
  return conflicts ? { conflicts } : { first: key };
}

/**
 * A row not matched with the CRM: its key's first row again, exactly (a line pasted twice: skipped and counted, as a
 * plain import skips it; that row makes the record agree), or a reject: another row with the key, or none.
 */
function setAside(
  o: MatchRowsOptions,
  plan: MatchPlan,
  row: { line: number; raw: RawRow },
  at: Exclude<InFile, { first: string }>,
  bytes: number,
  repeats: Array<[line: number, earlier: number]>,
): Promise<void> | undefined {
  if ('repeats' in at) {
    plan.repeated++;
    if (repeats.length < 6) repeats.push([row.line, at.repeats]);
    o.planFile?.add(row.line, 'repeated', undefined, `repeats line ${at.repeats} exactly: not sent`, row.raw);
    return o.out?.settled({ line: row.line, raw: row.raw, action: 'repeated', ids: [] }, bytes);
  }
  const name = o.fields.join(', ');
  const [action, code, reason] =
    'conflicts' in at
      ? (['duplicate', DUPLICATE_KEY, conflictText(at.conflicts, row.line, name)] as const)
      : (['invalid', MISSING_KEY, `the row has no ${name} (--match)`] as const);
  plan[action]++;
  o.planFile?.add(row.line, action, undefined, `${code}: ${reason}`, row.raw);
  return o.out?.invalid({ line: row.line, raw: row.raw, code, reason }, bytes);
}

/** `lines 767 and 1170 have the same email with other values: …` (the row's own line left out of the others). */
function conflictText(lines: readonly number[], own: number, name: string): string {
  const others = lines.filter((l) => l !== own);
  const listed =
    others.length === 1
      ? `line ${others[0]} has`
      : lines.length >= CONFLICT_LINES
        ? `lines ${others.join(', ')} and more have`
        : `lines ${others.slice(0, -1).join(', ')} and ${others.at(-1)} have`;
  return (
    `${listed} the same ${name} with other values: ` +
    'no row of it was sent (which one is right is not for crm to guess); keep the right one'
  );
}

/** One row with its key against the records holding it: created, updated, or settled. */
function placeRow(
  o: MatchRowsOptions,
  plan: MatchPlan,
  row: { line: number; record: ApiRecord; raw: RawRow },
  entry: ReturnType<MatchIndex['get']>,
  at: { index: MatchIndex; chunker: Chunker; nextSeq: () => number; text: TextFields; untyped: Untyped },
  bytes: number,
): Promise<void> | undefined {
  const { index, chunker, nextSeq } = at;
  const refuse = (code: string, reason: string): Promise<void> | undefined => {
    plan.invalid++;
    o.planFile?.add(row.line, 'invalid', undefined, `${code}: ${reason}`, row.raw);
    return o.out?.invalid({ line: row.line, raw: row.raw, code, reason }, bytes);
  };
  // a record holds the key but no id a PATCH can name: reported, never created a second time
  if (entry && 'noId' in entry)
    return refuse(NO_ID, `a ${o.resource} record with this ${o.fields.join(', ')} has no usable "id"; nothing sent`);
  const candidates = !entry ? [] : 'one' in entry ? [entry.one] : entry.ids.map((id) => ({ id, record: {} }));
  // the server gives ids: a row naming one no record has cannot be created under it (a rerun would create it again)
  if (candidates.length === 0 && o.fields.includes('id'))
    return refuse(NOT_FOUND, `no ${o.resource} record has id ${JSON.stringify(row.record.id)}`);
  const c = classify(row.record, candidates, [...o.fields, 'id'], at.text);
  // a record an interrupted run of this job changed or created, and the CRM still agrees: done by that run
  const done = c.action === 'unchanged' && o.earlier?.touched.has(row.line) === true;
  if (done) plan.done = (plan.done ?? 0) + 1;
  else plan[c.action]++;
  if (c.action === 'create') noteUntyped(row, index, at.text, at.untyped);
  const action = done ? 'done' : c.action;
  o.planFile?.add(row.line, action, c.id ?? c.candidates?.join(';'), changesText(c.changes), row.raw);
  if (action === 'create') o.creates?.add(row.line);
  // own counts: a field named `__proto__` is counted, not made the object's prototype
  for (const ch of c.changes)
    setOwn(plan.changes, ch.field, (Object.hasOwn(plan.changes, ch.field) ? plan.changes[ch.field]! : 0) + 1);
  if (!o.out) return undefined;
  if (c.action === 'create') {
    const chunk = chunker.push({
      line: row.line,
      record: createRecord(row.record, index, at.text, o.fields),
      raw: row.raw,
    });
    return chunk && o.out.chunk(chunk, bytes);
  }
  if (c.action === 'update') {
    return o.out.update(updateChunk(nextSeq(), row, c.id!, c.changes), beforeOf(c.changes), bytes);
  }
  return o.out.settled(
    { line: row.line, raw: row.raw, action: done ? 'done' : c.action, ids: c.candidates ?? [c.id!] },
    bytes,
  );
}

/**
 * A create an interrupted run sent without an answer: sent again whole, under that run's key, so the server replays
 * it if it created the records (never created twice), whatever the read found for its rows. The rows the read found
 * no record for go with it: answered from the cache, those were made and deleted since (send/outcome.ts).
 */
function keepCreate(
  o: MatchRowsOptions,
  plan: MatchPlan,
  kept: SpooledChunk,
  index: MatchIndex,
  bytes: number,
): Promise<void> | undefined {
  const [records, raws] = [kept.records(), kept.raws()];
  const rows = kept.lines.map((line, i) => ({ line, record: records[i]!, raw: raws[i]! }));
  const absent = rows.flatMap((r) => {
    const key = matchKey(o.fields, r.record);
    return key === undefined || index.get(key) === undefined ? [r.line] : [];
  });
  plan.create += rows.length;
  plan.resent = (plan.resent ?? 0) + rows.length;
  for (const r of rows) o.creates?.add(r.line);
  for (const r of rows)
    o.planFile?.add(r.line, 'create', undefined, 'sent again: an interrupted run sent it without an answer', r.raw);
  return o.out?.chunk({ seq: kept.seq, rows, lines: kept.lines, body: kept.body }, bytes, {
    runId: kept.runId!,
    absent,
  });
}

/**
 * A create's record: text cells of fields the CRM's records hold as numbers, booleans, objects or lists sent as such
 * when they read as one (an exported list's `20`, `false`, `["vip"]`; `00501` stays text), text trimmed, and what the
 * server sets on create left out (`owner_id`, kept for an update).
 */
function createRecord(
  record: ApiRecord,
  index: Pick<MatchIndex, 'sample'>,
  text: TextFields,
  keys: readonly string[],
): ApiRecord {
  const out: ApiRecord = {};
  for (const [field, value] of Object.entries(record)) {
    if (READ_ONLY_FIELDS.includes(field)) continue;
    // a key is compared trimmed, so sent trimmed, whatever its column's type
    const sent = text(field) ? valueToSend(value, index.sample?.(field), true) : value;
    setOwn(out, field, keys.includes(field) && typeof sent === 'string' ? sent.trim() : sent);
  }
  return out;
}

/** A PATCH of the changed fields only, as a chunk of one row (its body `[{id, …}]`, as an update's row). */
function updateChunk(seq: number, row: { line: number; raw: RawRow }, id: string, changes: Change[]) {
  const record: ApiRecord = { id, ...Object.fromEntries(changes.map((c) => [c.field, c.after])) };
  return { seq, rows: [{ line: row.line, record, raw: row.raw }], lines: [row.line], body: stringifyJson([record])! };
}

const beforeOf = (changes: Change[]): ApiRecord => Object.fromEntries(changes.map((c) => [c.field, c.before ?? null]));

function readText(index: MatchIndex): string {
  const took =
    index.ms === undefined ? '' : `, ${index.ms < 1000 ? 'under a second' : `${Math.round(index.ms / 1000)} s`}`;
  if (index.how === 'list')
    return `listed ${count(index.records)} records in ${plural(index.requests, 'request')}${took}`;
  return `${count(index.records)} records by id in ${plural(index.requests, 'request')}${took}${index.why ? ` (${index.why.replace(/\.$/, '')})` : ''}`;
}
