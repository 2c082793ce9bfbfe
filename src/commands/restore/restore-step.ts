// A restore's step for one collection (CONTRACT §10), on its frozen plan (plan.ts): the records found or matched go
// to the id map first (durable); those to create are written, their ids translated through the id map, to
// `DIR/restore/<target>/<resource>.create.ndjson` (durable, whole), which the batch engine creates as any create:
// chunks of 100, journaled, each chunk's idempotency key from its body, resumable. The ids it made go to the id map.
// A create file an interrupted run left is the plan: the same command resumes its job, never a new plan of it (the
// records it created have no key to be matched by, and a new file would be a new job: created twice).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { idText } from '../../api/ids.js';
import { findResource, type ResourceName } from '../../api/resources.js';
import type { HttpClient } from '../../http/types.js';
import { csvLine } from '../../import/files/outputs.js';
import { httpSender, runImport, type ImportOptions, type ImportSummary } from '../../import/index.js';
import { parseJson, stringifyJson } from '../../json/exact-json.js';
import { AtomicTextFile } from '../../util/atomic-file.js';
import { exists, listDir } from '../../util/fs.js';
import { fileStamp } from '../../util/stamp.js';
import { textLines } from '../../util/text-lines.js';
import { translate } from './decide.js';
import { OwnersFile, type OwnersOptions } from './owners.js';
import type { IdMap, IdMapEntry } from './id-map.js';
import { decisionAt, snapshotRecords, type CollectionPlan } from './plan.js';

/**
 * A new create file of a collection (its results and rejects files beside it): named by the time and process, since
 * the engine knows a job by its file's path (another content at the same path is refused as a changed file).
 */
export const newCreateFile = (workDir: string, resource: string, now: number): string =>
  join(workDir, `${resource}.create.${fileStamp(now)}-${process.pid}.ndjson`);

/** The create files of a collection an interrupted run left, oldest first. */
export async function leftCreateFiles(workDir: string, resource: string): Promise<string[]> {
  const mine = new RegExp(`^${resource}\\.create\\.[0-9TZ]+-[0-9]+\\.ndjson$`);
  return (await listDir(workDir))
    .filter((f) => mine.test(f))
    .sort()
    .map((f) => join(workDir, f));
}

export interface StepOptions {
  client: HttpClient;
  idMap: IdMap;
  workDir: string;
  /** the engine's: the base URL, the key's identity and mask, the journal folder */
  engine: Pick<ImportOptions, 'baseUrl' | 'keyId' | 'keyMask' | 'concurrency'> & { journalDir: string };
  clock: { now(): number };
  signal?: AbortSignal;
  warn: (m: string) => void;
  onProgress?: (text: string) => void;
  /** the owners of the records created: how they are set (owners.ts) */
  owners: OwnersOptions;
}

export interface StepResult {
  resource: ResourceName;
  created: number;
  failed: number;
  /** rows the engine left unsettled (no answer, not sent): the create file is kept for the same command */
  unsettled: number;
  ambiguous_file: string | null;
  rejects_file: string | null;
  requests: number;
  /** owners set by a PATCH; created records left the key's user's (no mapping here, or a collection that cannot be
   * updated); the owners file (its undo beside it) */
  owners_set?: number;
  owners_unmapped?: number;
  owners_not_updatable?: number;
  owners_failed?: number;
  /** why the owners were not set, when their run stopped (the server refused its first rows) */
  owners_not_set?: string;
  owners_file?: string | null;
}

const FLUSH = 1000;

export async function restoreStep(plan: CollectionPlan, o: StepOptions): Promise<StepResult> {
  const createFile = plan.resumed ?? newCreateFile(o.workDir, plan.resource, o.clock.now());
  const ambiguousFile = plan.decisions ? await writePlanned(plan, o, createFile) : null;
  const result: StepResult = {
    ...{ resource: plan.resource, created: 0, failed: 0, unsettled: 0, ambiguous_file: ambiguousFile },
    ...{ rejects_file: null, requests: 0 },
  };
  if (!(await exists(createFile))) return result;
  const { summary, keyOwner } = await create(plan.resource, createFile, o, plan.resumed !== undefined);
  // a collection that cannot be updated (interactions) keeps the key's user as owner: counted, as an owner unmapped
  const updatable = findResource(plan.resource)?.verbs.includes('update') === true;
  const ownersPath = createFile.replace(/\.create\.(.*)\.ndjson$/, '.owners.$1.csv');
  const owners = new OwnersFile(ownersPath, o.owners, { updatable, keyOwner });
  await mapCreated(plan.resource, `${createFile}.results.ndjson`, o.idMap, owners);
  const set = await owners.settle(plan.resource);
  const unsettled = summary.not_sent + summary.in_doubt + summary.unknown;
  // every row answered: the file has done its work (a rerun plans the failed rows again, as creates of a new file)
  if (unsettled === 0) await rm(createFile, { force: true });
  await rm(`${createFile}.results.ndjson`, { force: true });
  return {
    ...result,
    ...{ created: summary.created, failed: summary.failed + summary.invalid, unsettled },
    ...{ rejects_file: summary.rejects_file, requests: summary.requests },
    ...{
      owners_set: set.set,
      ...{ owners_unmapped: set.unmapped, owners_not_updatable: set.fixed },
      owners_file: set.owners_file,
    },
    ...{ owners_failed: set.failed, ...(set.why ? { owners_not_set: set.why } : {}) },
  };
}

/** The plan carried out up to the creates: the id map's new lines (synced), the ambiguous file, the create file (whole). */
async function writePlanned(plan: CollectionPlan, o: StepOptions, createFile: string): Promise<string | null> {
  const creates = plan.create > 0 ? await AtomicTextFile.create(createFile) : undefined;
  const ambiguous =
    plan.ambiguous > 0 ? await AtomicTextFile.create(join(o.workDir, `${plan.resource}.ambiguous.csv`)) : undefined;
  ambiguous?.write(csvLine(['snapshot_id', '_candidates', '_why']));
  let entries: IdMapEntry[] = [];
  let n = 0;
  try {
    for await (const { record, id } of snapshotRecords(plan.file)) {
      const d = decisionAt(plan, n++);
      if (d.action === 'found' || d.action === 'matched')
        entries.push({ resource: plan.resource, snapshot: id, target: d.target, how: d.action });
      else if (d.action === 'ambiguous') ambiguous!.write(csvLine([id, d.candidates.join(';'), d.why]));
      else if (d.action === 'create') {
        const { record: sent } = translate(record, (resource, ref) => o.idMap.get(resource, ref));
        // the snapshot's id and owner ride along (the engine leaves them out: --map "id=" "owner_id="), and come back
        // in the results: the id map's, and the owners file's
        const owner = record.owner_id === undefined ? {} : { owner_id: record.owner_id };
        creates!.write(stringifyJson({ id: record.id, ...owner, ...sent })! + '\n');
      }
      if (entries.length >= FLUSH) {
        await o.idMap.add(entries);
        entries = [];
      }
    }
    await o.idMap.add(entries);
    await ambiguous?.commit();
    await creates?.commit();
  } catch (err) {
    await Promise.all([ambiguous?.discard(), creates?.discard()]);
    throw err;
  } finally {
    plan.decisions?.close();
  }
  return ambiguous ? ambiguous.target : null;
}

/**
 * The batch engine on the create file: a plain create, every line a record of its own; and the owner the server gave a
 * record this run created (`keyOwner`: the key's user, from a create's answer), unknown when this run created none.
 */
async function create(
  resource: ResourceName,
  file: string,
  o: StepOptions,
  /** the file an interrupted run left: its job resumed; a new one is a new job, whatever was created from the same
   * records before (the batch engine knows a job by its content: a week later, the same records deleted again and
   * planned again into the same text, were "already imported" and never created) */
  resume: boolean,
): Promise<{ summary: ImportSummary; keyOwner?: string }> {
  let keyOwner: string | undefined;
  const send = httpSender(o.client, undefined);
  const summary = await runImport(
    {
      ...{ resource, input: file, format: 'ndjson', maps: ['id=', 'owner_id='], everyRow: true, resume },
      ...{ resultsPath: `${file}.results.ndjson`, baseUrl: o.engine.baseUrl, keyId: o.engine.keyId },
      ...{ keyMask: o.engine.keyMask, concurrency: o.engine.concurrency },
    },
    {
      send: async (req) => {
        const res = await send(req);
        keyOwner ??= res.envelope.data.items.map(createdOwner).find((x) => x !== undefined);
        return res;
      },
      ...{
        journalDir: o.engine.journalDir,
        clock: o.clock,
        signal: o.signal,
        warn: (m) => o.warn(restated(m, resource)),
      },
      stats: () => ({ ...o.client.stats }),
      onProgress: (p) =>
        o.onProgress?.(
          `creating ${resource}: ${p.created.toLocaleString('en-US')} of ${(p.rowsTotal ?? 0).toLocaleString('en-US')}`,
        ),
    },
  );
  return { summary, keyOwner };
}

/** A created item's owner: the user the server gives the records this key creates. */
const createdOwner = (item: { status?: unknown; data?: unknown }): string | undefined => {
  const owner = item.status === 'created' ? (item.data as { owner_id?: unknown } | undefined)?.owner_id : undefined;
  return typeof owner === 'string' && owner !== '' ? owner : undefined;
};

/**
 * The engine's notices, as a restore says them: a create file whose job an interrupted run finished is not "imported
 * again with --no-resume" (that would create every record a second time): its records' ids go to the id map.
 */
export function restated(message: string, resource: string): string {
  if (!message.includes('--no-resume')) return message;
  return `${resource}: an interrupted run created these records already; nothing is sent again, their ids go to the id map`;
}

/** Each created record's new id, from the engine's results (its journal's: this run's and an earlier one's), to the id map. */
async function mapCreated(resource: ResourceName, results: string, idMap: IdMap, owners: OwnersFile): Promise<void> {
  let entries: IdMapEntry[] = [];
  for await (const text of textLines(results, { missingOk: true })) {
    const r = parseJson(text) as { id?: unknown; _input_id?: unknown; owner_id?: unknown };
    const [snapshot, target] = [idText(r._input_id), idText(r.id)];
    if (snapshot === undefined || target === undefined) continue;
    entries.push({ resource, snapshot, target, how: 'created' });
    await owners.add(target, r.owner_id);
    if (entries.length >= FLUSH) {
      await idMap.add(entries);
      entries = [];
    }
  }
  await idMap.add(entries);
}
