// A restore's plan of one collection (CONTRACT §10), before anything is sent: the snapshot's records read twice (their
// keys and ids first; then each one's decision), the target's collection listed once between, into two indexes (by
// id, by the match fields) of only the records the snapshot may name. The decisions go to a temporary file, a line
// per snapshot record in its order, which the restore step (restore-step.ts) takes as it is: a frozen plan.
import { join } from 'node:path';
import type { ApiRecord } from '../../api/envelopes.js';
import { idText } from '../../api/ids.js';
import { PAGE_SIZE_MAX, type ResourceName } from '../../api/resources.js';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { plural } from '../../output/plural.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { nearestTypo } from '../../util/nearest.js';
import type { HttpClient } from '../../http/types.js';
import { matchKey } from '../../import/match/key.js';
import { RecordIndexBuilder } from '../../import/match/record-index.js';
import { parseJson } from '../../json/exact-json.js';
import { AtomicTextFile, tempPathFor } from '../../util/atomic-file.js';
import { csvLine, serverCell } from '../../import/files/outputs.js';
import { HashTable } from '../../util/hash-table.js';
import { LineFile } from '../../util/line-file.js';
import { textLines } from '../../util/text-lines.js';
import { decide, translate, type Decision } from './decide.js';
import type { IdMap } from './id-map.js';

export interface CollectionPlan {
  resource: ResourceName;
  /** DIR/<resource>.ndjson */
  file: string;
  matchFields: readonly string[];
  records: number;
  mapped: number;
  found: number;
  matched: number;
  ambiguous: number;
  create: number;
  /** ids other records' fields hold that no record of the restore maps: kept as they are */
  refsKept: number;
  /** ids the fields of records left as they are (in the id map, found, matched) hold, of records that come back with
   * another id: left as they are (the contract leaves such a record alone), said */
  refsStale?: number;
  /** the target's records listed, and the requests that took */
  targetRecords: number;
  readRequests: number;
  /** each snapshot record's decision, in file order (undefined: a resumed create, not planned again) */
  decisions?: LineFile;
  /** a create file an interrupted run left: resumed as it is */
  resumed?: string;
  /** snapshot id → its line in `decisions` */
  lineOf?: HashTable;
}

export interface PlanOptions {
  client: HttpClient;
  resource: ResourceName;
  dir: string;
  /** the target's own temporary files go here (DIR/restore/<target>/) */
  workDir: string;
  fields: readonly string[];
  /** the fields are --match's (not the default): one that no record has is a typo, refused */
  explicit?: boolean;
  /** the snapshot was taken of the target's own base URL: a record still there has its id */
  sameOrg: boolean;
  idMap: IdMap;
  /** `resource NUL snapshot id` of every record the plan so far maps (earlier collections): a reference it translates
   * (1: to its own id; 2: to another, a record created or matched) */
  willMap: HashTable;
  /** this collection's records are no later collection's references: not added to `willMap` (read all the same) */
  last?: boolean;
  /** keep each record's line in the plan by its id (`lineOf`: a dry run's links ask where a record goes) */
  lineOf?: boolean;
  signal?: AbortSignal;
  onProgress?: (text: string) => void;
}

/** The snapshot's records of one collection, each with its line (an error names the file and line of one without an id). */
export async function* snapshotRecords(file: string): AsyncGenerator<{ record: ApiRecord; id: string; line: number }> {
  let line = 0;
  for await (const text of textLines(file, { missingOk: true })) {
    line++;
    let record: unknown;
    try {
      record = parseJson(text);
    } catch (err) {
      throw new Error(`${file}, line ${line}: not JSON (${(err as Error).message})`);
    }
    const id = record !== null && typeof record === 'object' ? idText((record as ApiRecord).id) : undefined;
    if (id === undefined) throw new Error(`${file}, line ${line}: not a record with an id`);
    yield { record: record as ApiRecord, id, line };
  }
}

export async function planCollection(o: PlanOptions): Promise<CollectionPlan> {
  const file = join(o.dir, `${o.resource}.ndjson`);
  // 1. the snapshot's keys and the ids the target may hold
  const { keys, ids, records } = await snapshotKeys(o, file);
  // 2. the target's collection, listed once: the ids the snapshot may name marked there (`ids`' column 1), and the
  // records by the match fields in an index sharing the snapshot's keys table (its column 1: one table for both)
  const byKey = o.fields.length > 0 ? new RecordIndexBuilder(o.fields, [], keys, o.workDir, false) : undefined;
  const decisions = new LineFile(tempPathFor(join(o.workDir, `${o.resource}.plan`)));
  const listed = new LineFile(tempPathFor(join(o.workDir, `${o.resource}.listed`)));
  const lineOf = o.lineOf ? new HashTable() : undefined;
  try {
    const start = o.client.stats.requests;
    const targetRecords = await readTarget(o, { ids, listed }, byKey);
    if (o.explicit && byKey && byKey.records > 0 && byKey.unseen.length > 0)
      throw unseenMatch(
        o.resource,
        byKey.unseen[0]!,
        byKey.firstFields ?? [],
        `the target's ${plural(byKey.records, 'record')}`,
      );
    const plan: CollectionPlan = {
      ...{ resource: o.resource, file, matchFields: o.fields, records, mapped: 0, found: 0, matched: 0 },
      ...{ ambiguous: 0, create: 0, refsKept: 0, targetRecords, decisions, lineOf },
      readRequests: o.client.stats.requests - start,
    };
    // 3. the keys of the records in the target by the id map or their own id: those records are not the others' (each
    // key's count, column 0, made the count of its records not placed)
    // a hit of the hash is checked against the id the target listed (two ids sharing a 64-bit hash are two)
    const there = (id: string) => {
      const at = ids.get(id, 1);
      return at !== undefined && listed.read(at) === id;
    };
    const placed = (id: string) => {
      const mapped = o.idMap.get(o.resource, id);
      return (mapped !== undefined && there(mapped)) || (o.sameOrg && there(id));
    };
    if (byKey)
      for await (const { record, id } of snapshotRecords(file)) {
        const key = matchKey(o.fields, record);
        if (key !== undefined && placed(id)) keys.set(key, keys.get(key)! - 1);
      }
    // 4. each record's decision, in file order
    const lookup = (resource: ResourceName, id: string) =>
      o.idMap.get(resource, id) ?? NEW_ID[o.willMap.get(`${resource}\u0000${id}`) ?? 0]?.(id);
    for await (const { record, id } of snapshotRecords(file)) {
      const mapped = o.idMap.get(o.resource, id);
      const key = byKey ? matchKey(o.fields, record) : undefined;
      const others = key === undefined ? 0 : (keys.get(key) ?? 1) - 1;
      const d = decide({
        ...{ id, mapped, mappedThere: mapped !== undefined && there(mapped), sameIdThere: o.sameOrg && there(id) },
        ...{ key, keyOthers: Math.max(0, others), byKey: key === undefined ? undefined : byKey?.get(key) },
        claimed: (t) => ids.get(t) !== undefined && there(t),
      });
      plan[d.action]++;
      const t = translate(record, lookup);
      if (d.action === 'create') plan.refsKept += t.kept;
      // found or matched now (a record the id map holds was said by the run that mapped it; one it created holds
      // translated references already: the trial's rerun was told of 40 stale references that were not)
      else if (d.action === 'found' || d.action === 'matched') plan.refsStale = (plan.refsStale ?? 0) + t.changed;
      // 1: the record keeps its id (in the id map, found by it); 2: it will have another (created, matched)
      if (d.action !== 'ambiguous')
        if (!o.last) o.willMap.set(`${o.resource}\u0000${id}`, 'target' in d && d.target === id ? 1 : 2);
      const n = decisions.append(JSON.stringify(d));
      lineOf?.set(id, n);
    }
    return plan;
  } catch (err) {
    decisions.close();
    throw err;
  } finally {
    byKey?.close();
    listed.close();
  }
}

/** A reference's id as the plan will have it (willMap's 1: its own; 2: another, not known yet). */
const NEW_ID: Record<number, (id: string) => string> = { 1: (id) => id, 2: (id) => `${id}\u0000new` };

/** Each key of the snapshot (how many records have it), and the ids the target may hold: the records' own (the same
 * organization) and those the id map gives. */
async function snapshotKeys(o: PlanOptions, file: string) {
  // two columns each: the count here (column 0), the target's record there once read (column 1, RecordIndexBuilder's)
  const keys = new HashTable(2);
  const ids = new HashTable(2);
  let records = 0;
  for await (const { record, id } of snapshotRecords(file)) {
    records++;
    const key = o.fields.length > 0 ? matchKey(o.fields, record) : undefined;
    if (key !== undefined) keys.set(key, (keys.get(key) ?? 0) + 1);
    if (o.sameOrg) ids.set(id, 1);
    const mapped = o.idMap.get(o.resource, id);
    if (mapped !== undefined) ids.set(mapped, 1);
  }
  return { keys, ids, records };
}

/**
 * The target's collection listed once (100 a page, the client's pacing and retries): each id the snapshot may name
 * marked (`ids`' column 1: its line in `listed`, the ids themselves on disk), each record into the index by key.
 */
async function readTarget(
  o: PlanOptions,
  target: { ids: HashTable; listed: LineFile },
  byKey: RecordIndexBuilder | undefined,
): Promise<number> {
  let records = 0;
  let pages = 0;
  for await (const page of o.client.pages(`/${o.resource}`, { limit: PAGE_SIZE_MAX, signal: o.signal })) {
    for (const record of page.data) {
      records++;
      const id = idText(record.id);
      if (id !== undefined && target.ids.get(id) !== undefined) target.ids.set(id, target.listed.append(id), 1);
      byKey?.add(record);
    }
    o.onProgress?.(`reading the target's ${o.resource}: ${plural(records, 'record')}, ${plural(++pages, 'page')}`);
    if (o.signal?.aborted) throw new InterruptedError('interrupted while reading the target');
  }
  return records;
}

/**
 * `--match RES=FIELDS` of a field no record of the snapshot has (a typo: every record "to create", a duplicate of each
 * one the target holds): refused before anything is read or sent. Read until each field is seen (the first record,
 * mostly).
 */
export async function checkMatchFields(dir: string, resource: ResourceName, fields: readonly string[]): Promise<void> {
  let unseen = [...fields];
  let first: string[] | undefined;
  let records = 0;
  for await (const { record } of snapshotRecords(join(dir, `${resource}.ndjson`))) {
    records++;
    first ??= Object.keys(record);
    unseen = unseen.filter((f) => !Object.hasOwn(record, f));
    if (unseen.length === 0) return;
  }
  if (records > 0) throw unseenMatch(resource, unseen[0]!, first ?? [], `the snapshot's ${plural(records, 'record')}`);
}

/** `--match contacts=emial`: refused before anything is sent, with the field it may mean. */
function unseenMatch(resource: string, field: string, fields: readonly string[], whose: string): UsageError {
  const near = nearestTypo(field, fields);
  return new UsageError(
    `--match ${resource}=…: none of ${whose} has a field "${field}"${near ? `; did you mean ${near}?` : ''} (nothing was sent)`,
    {
      hint: `name fields the ${resource} records have (one is in ${resource}.ndjson), or leave --match out for the default`,
    },
  );
}

/** Where a plan puts a snapshot record: its target id (in the id map, found, matched), `pending` (created), or none. */
export function plannedTarget(plan: CollectionPlan, id: string): string | { pending: true } | undefined {
  const n = plan.lineOf?.get(id);
  if (n === undefined) return undefined;
  const d = decisionAt(plan, n);
  return d.action === 'create' ? { pending: true } : d.action === 'ambiguous' ? undefined : d.target;
}

/** The decision of the `n`-th record (from 0) of a plan. */
export const decisionAt = (plan: CollectionPlan, n: number): Decision =>
  JSON.parse(plan.decisions!.read(n)) as Decision;

/**
 * `--plan FILE` (CONTRACT §10): every snapshot record's decision as CSV, `resource,_line,_action,id,target_id,
 * _candidates,_note` (its line in DIR/<resource>.ndjson, the snapshot id, the target's id when found or matched, an
 * ambiguous record's candidates and why), written whole or not at all (renamed into place), before anything is sent.
 * A collection resumed from an interrupted run's create file has one line, `_action` `resume`.
 */
export async function writePlanFile(
  file: AtomicTextFile,
  plans: readonly CollectionPlan[],
  say: (message: string) => void,
): Promise<void> {
  try {
    file.write(csvLine(['resource', '_line', '_action', 'id', 'target_id', '_candidates', '_note']));
    for (const plan of plans) {
      if (!plan.decisions) {
        const note = `an interrupted run's create file, resumed as it is: ${plan.resumed ?? ''}`;
        file.write(csvLine([plan.resource, '', 'resume', '', '', '', serverCell(note)]));
        continue;
      }
      let n = 0;
      for await (const { id, line } of snapshotRecords(plan.file)) {
        const d = decisionAt(plan, n++);
        const [target, candidates, why] =
          d.action === 'ambiguous' ? ['', d.candidates.join(';'), d.why] : ['target' in d ? d.target : '', '', ''];
        file.write(csvLine([plan.resource, String(line), d.action, ...[id, target, candidates, why].map(serverCell)]));
        if (n % 1000 === 0) await file.drain();
      }
    }
    await file.commit();
    say(`Each record's decision is in ${sanitizeForTerminal(file.target)}.`);
  } catch (err) {
    await file.discard();
    throw err;
  }
}

/** The `--plan` file, opened (a temporary file beside it) before anything is read: one that cannot be written is exit 2. */
export async function openPlanFile(target: string): Promise<AtomicTextFile> {
  return AtomicTextFile.create(target).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot write the plan file ${target} (${err.code ?? err.message}): nothing was read or sent`);
  });
}
