// A restore's plan of one collection (CONTRACT §10), before anything is sent: the snapshot's records read three times
// (their keys and ids; which are placed already; each one's decision), the target's collection listed once to a
// temporary file (each record's id and match fields), the ids the snapshot may name marked as they come, and the
// index by the match fields built after, of only the keys records not placed hold. The decisions go to a temporary
// file, a line per snapshot record in its order, which the restore step (restore-step.ts) takes as it is: a frozen plan.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiRecord } from '../../api/envelopes.js';
import { idText } from '../../api/ids.js';
import { PAGE_SIZE_MAX, type ResourceName } from '../../api/resources.js';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { plural } from '../../output/plural.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { nearestTypo } from '../../util/nearest.js';
import type { HttpClient } from '../../http/types.js';
import { matchKey, UnseenFields } from '../../import/match/key.js';
import { RecordIndexBuilder } from '../../import/match/record-index.js';
import { parseJson, stringifyJson } from '../../json/exact-json.js';
import { setOwn } from '../../util/set-own.js';
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
  /** the records the snapshot's manifest says the collection holds: its tables sized for them at once */
  expected?: number;
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
  // 1. the snapshot's keys (each one's count of records) and the ids the target may hold
  const { keys, ids, records } = await snapshotKeys(o, file);
  const decisions = new LineFile(tempPathFor(join(o.workDir, `${o.resource}.plan`)));
  const listed = new LineFile(tempPathFor(join(o.workDir, `${o.resource}.listed`)));
  const lineOf = o.lineOf ? new HashTable() : undefined;
  let byKey: RecordIndexBuilder | undefined;
  try {
    const start = o.client.stats.requests;
    // 2. the target's collection, listed once: each record's id and match fields to `listed`, and the ids the
    // snapshot may name marked in `ids` (their line there, + 1)
    const target = await readTarget(o, { ids, listed });
    if (o.explicit && target.records > 0 && target.unseen.length > 0)
      throw unseenMatch(
        o.resource,
        target.unseen[0]!,
        target.firstFields,
        `the target's ${plural(target.records, 'record')}`,
      );
    const plan: CollectionPlan = {
      ...{ resource: o.resource, file, matchFields: o.fields, records, mapped: 0, found: 0, matched: 0 },
      ...{ ambiguous: 0, create: 0, refsKept: 0, targetRecords: target.records, decisions, lineOf },
      readRequests: o.client.stats.requests - start,
    };
    // a hit of the hash is checked against the id the target listed (two ids sharing a 64-bit hash are two)
    const there = (id: string) => {
      const at = ids.get(id);
      return at !== undefined && at > 0 && listed.read(at - 1).startsWith(`[${JSON.stringify(id)},`);
    };
    const placed = (id: string) => {
      const mapped = o.idMap.get(o.resource, id);
      return (mapped !== undefined && there(mapped)) || (o.sameOrg && there(id));
    };
    // 3. the records in the target by the id map or their own id are not the others': each key's count made the count
    // of its records not placed
    let unplaced = 0;
    if (o.fields.length > 0)
      for await (const { record, id } of snapshotRecords(file)) {
        const key = matchKey(o.fields, record);
        if (key === undefined) continue;
        if (placed(id)) keys.set(key, keys.get(key)! - 1);
        else unplaced++;
      }
    // 4. the target's records by the match fields, only those having a key a record not placed holds (none when each
    // record is in the id map: a million contacts restored again index nothing)
    if (unplaced > 0) byKey = indexByKey(o.fields, listed, (key) => (keys.get(key) ?? 0) > 0, o.workDir);
    // 5. each record's decision, in file order
    const lookup = (resource: ResourceName, id: string) =>
      o.idMap.get(resource, id) ?? NEW_ID[o.willMap.get(`${resource}\u0000${id}`) ?? 0]?.(id);
    for await (const { record, id } of snapshotRecords(file)) {
      const mapped = o.idMap.get(o.resource, id);
      const key = o.fields.length > 0 ? matchKey(o.fields, record) : undefined;
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

/** Each key of the snapshot (how many records have it), and the ids the target may hold (0: not listed yet): the
 * records' own (the same organization) and those the id map gives. */
async function snapshotKeys(o: PlanOptions, file: string) {
  // the manifest's count, no more than the file could hold (`{"id":1}` and a newline: 9 bytes), a hand-edited one too
  const expected = Math.min(o.expected ?? 0, ((await stat(file).catch(() => undefined))?.size ?? 0) / 9);
  const keys = new HashTable(1, o.fields.length > 0 ? expected : 0);
  const ids = new HashTable(1, o.sameOrg || o.idMap.count(o.resource) > 0 ? expected : 0);
  let records = 0;
  for await (const { record, id } of snapshotRecords(file)) {
    records++;
    const key = o.fields.length > 0 ? matchKey(o.fields, record) : undefined;
    if (key !== undefined) keys.set(key, (keys.get(key) ?? 0) + 1);
    if (o.sameOrg) ids.set(id, 0);
    const mapped = o.idMap.get(o.resource, id);
    if (mapped !== undefined) ids.set(mapped, 0);
  }
  return { keys, ids, records };
}

/**
 * The target's collection listed once (100 a page, the client's pacing and retries): each record to `listed` as
 * `[id text, {id, the match fields}]` in the order read, each id the snapshot may name marked (`ids`: its line + 1);
 * the match fields no record had (a typo of --match) and the first record's fields, for the message.
 */
async function readTarget(o: PlanOptions, target: { ids: HashTable; listed: LineFile }) {
  let records = 0;
  let pages = 0;
  const seen = new UnseenFields(o.fields);
  for await (const page of o.client.pages(`/${o.resource}`, { limit: PAGE_SIZE_MAX, signal: o.signal })) {
    for (const record of page.data) {
      records++;
      seen.see(record);
      const id = idText(record.id);
      const kept: ApiRecord = {};
      for (const field of ['id', ...o.fields]) if (Object.hasOwn(record, field)) setOwn(kept, field, record[field]);
      const n = target.listed.append(`[${JSON.stringify(id ?? null)},${stringifyJson(kept)!}]`);
      if (id !== undefined && target.ids.get(id) !== undefined) target.ids.set(id, n + 1);
    }
    o.onProgress?.(`reading the target's ${o.resource}: ${plural(records, 'record')}, ${plural(++pages, 'page')}`);
    if (o.signal?.aborted) throw new InterruptedError('interrupted while reading the target');
  }
  return { records, unseen: seen.unseen, firstFields: seen.first ?? [] };
}

/** The index by key of the records `listed` holds whose key is `wanted`, read in the order they were listed (a record
 * shown twice by a shifting collection counts once, at its latest read). */
function indexByKey(
  fields: readonly string[],
  listed: LineFile,
  wanted: (key: string) => boolean,
  dir: string,
): RecordIndexBuilder {
  const byKey = new RecordIndexBuilder(fields, [], wanted, dir, false);
  try {
    for (let n = 0; n < listed.count; n++) byKey.add((parseJson(listed.read(n)) as [unknown, ApiRecord])[1]);
  } catch (err) {
    byKey.close();
    throw err;
  }
  return byKey;
}

/**
 * `--match RES=FIELDS` of a field no record of the snapshot has (a typo: every record "to create", a duplicate of each
 * one the target holds): refused before anything is read or sent. Read until each field is seen (the first record,
 * mostly).
 */
export async function checkMatchFields(dir: string, resource: ResourceName, fields: readonly string[]): Promise<void> {
  const seen = new UnseenFields(fields);
  let records = 0;
  for await (const { record } of snapshotRecords(join(dir, `${resource}.ndjson`))) {
    records++;
    seen.see(record);
    if (seen.unseen.length === 0) return;
  }
  if (records > 0)
    throw unseenMatch(resource, seen.unseen[0]!, seen.first ?? [], `the snapshot's ${plural(records, 'record')}`);
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

/** Where a plan puts a snapshot record not in the id map: its target id (found, matched), `pending` (created), or none. */
export function plannedTarget(plan: CollectionPlan, id: string): string | { pending: true } | undefined {
  // a collection resumed from an interrupted run's create file: a record the id map does not hold yet is in it, to be
  // created (the third trial's dry run after a kill left all its links out, and the run made them all)
  if (!plan.decisions) return plan.resumed !== undefined ? { pending: true } : undefined;
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
