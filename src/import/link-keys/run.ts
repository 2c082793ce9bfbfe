// `crm links import PARENT RELATION FILE` by natural key, and `--remove` (CONTRACT §7d), read top to bottom:
// the input made ready → its header's layout (layout.ts) → read and plan (resolve.ts) → the plan shown (the caller's
// onPlan: a dry run stops there) → the job's way-back names (a rerun of an unfinished job adds to its files) → one
// request per row to send, its way-back line durable first (`<input>.linked.csv`; a removal's `<input>.unlinked.csv`)
// → the files committed, the summary. Exactly once: a rerun reads again, so a link made is `linked` (no request), and
// every request carries a key of its job, parent and child, which a server replays.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { CrmError, InterruptedError, NotFoundError, UsageError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { pathSegment } from '../../http/url.js';
import { Pool } from '../../util/pool.js';
import { fileStamp } from '../../util/stamp.js';
import { prepareInput } from '../input/source.js';
import { openInput } from '../input/reader.js';
import { parseColumnMaps } from '../input/header.js';
import { createRejectsWriter, RowsOut, serverCell, warnKept, type RowShape } from '../files/outputs.js';
import { defaultRejectsPath } from '../plan.js';
import { linkLayout, type LinkLayout } from './layout.js';
import { JobState, WayBackLog, type WayBack } from './way-back.js';
import { otherFields, resolveLinks, SENDS, type LinkPlan, type Pending, type PlannedRow } from './resolve.js';

export interface KeyedLinkOptions {
  parent: string;
  relation: string;
  file: string;
  maps?: readonly string[];
  remove: boolean;
  dryRun: boolean;
  planPath?: string;
  rejectsPath?: string;
  concurrency: number;
  encoding?: string;
  /** the profile's API: part of the job's identity */
  baseUrl: string;
  /** flags given that only the id path (the batch engine's) has, as typed (`--results`): refused on this path */
  idPathFlags?: readonly string[];
  /** a file of pairs crm made (a records file's links): read from here, named `label`, its way back beside `base` */
  derived?: {
    source: Readable;
    label: string;
    base: string;
    pending?: Pending;
    /** the side the records file's own records are on */
    records?: 'parent' | 'child';
    /** the records its batch created in this run (no links to read) */
    fresh?: ReadonlySet<string>;
  };
}

export interface KeyedLinkDeps {
  client: HttpClient;
  journalDir: string;
  cwd: string;
  clock: { now(): number };
  signal?: AbortSignal;
  stdin?: Readable;
  warn(message: string): void;
  progress?(text: string): void;
  /** the plan, before anything is sent (a dry run's output) */
  onPlan?(plan: LinkPlanSummary): Promise<void>;
}

/** The plan as shown: each action's count and the requests. */
export interface LinkPlanSummary {
  resource: string;
  rows: number;
  counts: Record<string, number>;
  read_requests: number;
  requests: number;
  /** a linked file's rows of another parent or relation, left out */
  other_relations: number;
  resumed: boolean;
}

export interface LinkSummary {
  resource: string;
  remove: boolean;
  /** a meeting's association (set, replaced, unchanged) rather than links */
  association: boolean;
  rows: number;
  linked: number;
  already_linked: number;
  removed: number;
  not_linked: number;
  set: number;
  replaced: number;
  unchanged: number;
  not_found: number;
  /** of `not_found`: rows the server did not find when sent (404: a record of the pair deleted since) */
  gone?: number;
  ambiguous: number;
  duplicate: number;
  /** rows naming the pair an earlier row named, with the same fields: skipped (that row does what they would) */
  repeated: number;
  invalid: number;
  failed: number;
  requests: number;
  read_requests: number;
  elapsed_ms: number;
  rejects_file: string | null;
  ambiguous_file: string | null;
  /** an ambiguous file already there that was not this run's (edited, say): moved to this name, not overwritten */
  ambiguous_kept_file: string | null;
  linked_file: string | null;
  unlinked_file: string | null;
  plan_file: string | null;
  /** every action's count as planned */
  planned: Record<string, number>;
  dry_run?: true;
}

/** Flags of a run by id, given to one by key (or with --remove or --plan): refused, never taken and ignored. */
function idPathOnly(flags: readonly string[], name: string): UsageError {
  const [list, apply] = [flags.join(', '), flags.length === 1 ? 'applies' : 'apply'];
  return new UsageError(
    `${list} ${apply} only to a file naming both sides by id (deal_id, contact_id), without --remove or --plan; ${name} names a side by its fields`,
    {
      hint: "a run by key writes <input>.linked.csv (the links it made) and, with --plan FILE, every row's action; leave the flag out",
    },
  );
}

/** Runs the job; undefined when the file names every side by id (and is no linked file): the batch engine's, as before. */
export async function runKeyedLinks(o: KeyedLinkOptions, deps: KeyedLinkDeps): Promise<LinkSummary | undefined> {
  const started = deps.clock.now();
  const maps = parseColumnMaps(o.maps);
  await mkdir(deps.journalDir, { recursive: true, mode: 0o700 });
  const input = await prepareInput(o.derived?.source ?? o.file, {
    stdin: deps.stdin,
    tmpDir: deps.journalDir,
    encoding: o.encoding,
    signal: deps.signal,
  });
  try {
    const hash = createHash('sha256');
    const name = o.derived?.label ?? (input.isStdin ? '-' : input.name);
    const reader = await openInput(input.path, {
      name,
      format: 'csv',
      onChunk: (c) => hash.update(c),
      signal: deps.signal,
    });
    const always = o.remove || input.isStdin || o.planPath !== undefined || o.derived !== undefined;
    const layout = linkLayout(o.parent, o.relation, reader.header ?? [], maps, name, always);
    if (!layout) {
      reader.close();
      return undefined;
    }
    // the trial's `--results r.csv` was taken and no file written
    if (o.idPathFlags?.length) {
      reader.close();
      throw idPathOnly(o.idPathFlags, name);
    }
    const pending = o.derived?.pending;
    const resolving = { ...deps, dir: deps.journalDir, fresh: o.derived?.fresh };
    const plan = await resolveLinks({ reader, layout, remove: o.remove, pending }, resolving);
    const job = jobOf(o, o.derived?.base ?? (input.isStdin ? '-' : input.origin), hash.digest('hex'), [
      ...maps.entries(),
    ]);
    const state = await JobState.find(deps.journalDir, job);
    const shown = planSummary(o, plan, state !== undefined);
    await deps.onPlan?.(shown);
    const base = o.derived
      ? o.derived.base
      : input.isStdin
        ? join(deps.cwd, `crm-links-${fileStamp(state?.began ?? started)}`)
        : input.origin;
    const shape: RowShape = { format: 'csv', header: layout.header };
    const tag = `${o.remove ? 'unlink' : 'link'}-${o.parent}-${o.relation}`;
    const rejectsPath = o.rejectsPath ?? defaultRejectsPath(name, 'csv', started, deps.cwd, tag);
    const planFile = o.planPath ? await writePlan(o.planPath, shape, plan, noteFor(o, layout)) : null;
    const summary = emptySummary(o, plan);
    if (o.dryRun) return { ...summary, plan_file: planFile, elapsed_ms: deps.clock.now() - started, dry_run: true };
    const names = state ?? (plan.sends > 0 ? await JobState.begin(deps.journalDir, job, base, started) : undefined);
    const sent = await sendPlan(o, layout, plan, { ...deps, names, job, rejectsPath, base, shape });
    const before = state ? await doneBefore(o, plan, state, summary, sent.counts) : {};
    // a job whose every row went through is done: a later run is a new one (its own way-back names)
    if (sent.failed === 0 && names) await JobState.end(deps.journalDir, job);
    const { gone, ...done } = sent.counts;
    return {
      ...summary,
      ...done,
      ...before,
      ...{ not_found: summary.not_found + gone, gone, failed: sent.failed },
      requests: plan.readRequests + sent.requests,
      elapsed_ms: deps.clock.now() - started,
      rejects_file: sent.files.rejects,
      ambiguous_file: sent.files.ambiguous,
      ambiguous_kept_file: sent.files.ambiguous_kept,
      linked_file: sent.files.linked,
      unlinked_file: sent.files.unlinked,
      plan_file: planFile,
    };
  } finally {
    await input.cleanup();
  }
}

/**
 * A resumed job's counts: a pair its stopped run linked (or removed) is this job's, not "already linked" ("not
 * linked"), though the rerun's read found it done (the trial: a finished removal said half its rows were not linked).
 */
async function doneBefore(o: KeyedLinkOptions, plan: LinkPlan, state: WayBack, s: LinkSummary, c: SentCounts) {
  const earlier = await WayBackLog.earlier(o.remove ? state.unlinked : state.linked);
  const found = o.remove ? 'not_linked' : plan.association ? 'unchanged' : 'linked';
  const n = plan.rows.filter(
    (r) => r.act.action === found && 'parentId' in r.act && earlier.has(`${r.act.parentId}\0${r.act.childId}`),
  ).length;
  if (o.remove) return { removed: c.removed + n, not_linked: c.not_linked - n };
  if (plan.association) return { set: c.set + n, unchanged: s.unchanged - n };
  return { linked: c.linked + n, already_linked: s.already_linked - n };
}

function planSummary(o: KeyedLinkOptions, plan: LinkPlan, resumed: boolean): LinkPlanSummary {
  return {
    resource: `${o.parent} ${o.relation}`,
    rows: plan.rows.length,
    counts: plan.counts,
    read_requests: plan.readRequests,
    requests: plan.sends,
    other_relations: plan.otherRelations,
    resumed,
  };
}

function emptySummary(o: KeyedLinkOptions, plan: LinkPlan): LinkSummary {
  const c = (a: string) => plan.counts[a] ?? 0;
  return {
    resource: `${o.parent} ${o.relation}`,
    remove: o.remove,
    association: plan.association,
    rows: plan.rows.length,
    ...{ linked: 0, already_linked: c('linked'), removed: 0, not_linked: c('not_linked'), set: 0, replaced: 0 },
    ...{ unchanged: c('unchanged'), not_found: c('not_found'), ambiguous: c('ambiguous'), duplicate: c('duplicate') },
    repeated: c('repeated'),
    ...{ invalid: c('invalid'), failed: 0, requests: plan.readRequests, read_requests: plan.readRequests },
    elapsed_ms: 0,
    planned: plan.counts,
    ...{ rejects_file: null, ambiguous_file: null, ambiguous_kept_file: null, linked_file: null },
    ...{ unlinked_file: null, plan_file: null },
  };
}

/** The job's identity: its words, its input (where and what), and the API. */
function jobOf(o: KeyedLinkOptions, origin: string, sha256: string, maps: Array<[string, string]>): string {
  const words = { parent: o.parent, relation: o.relation, remove: o.remove, origin, sha256, maps, baseUrl: o.baseUrl };
  return createHash('sha256').update(JSON.stringify(words)).digest('hex').slice(0, 32);
}

/** `--plan FILE`: every row's action, the ids it resolved to, and why (a candidate list, the side not found). */
async function writePlan(
  path: string,
  shape: RowShape,
  plan: LinkPlan,
  note: (r: PlannedRow) => string,
): Promise<string> {
  const out = await RowsOut.create(path, shape, ['_line', '_action', 'parent_id', 'child_id', '_note']);
  for (const r of plan.rows) {
    const a = r.act;
    const ids = 'parentId' in a ? [a.parentId, a.childId] : ['', ''];
    out.add(
      r.raw,
      [String(r.line), a.action, ...ids.map(serverCell), serverCell(note(r))],
      [r.line, a.action, ...ids, note(r)],
    );
  }
  await out.commit();
  return path;
}

/**
 * Why a row is not sent, in words (the plan file's `_note`, the rejects file's message). A records file's own record not
 * found: its row was not made (the trial's rows refused as repeating a name with other values read "no deal has …").
 */
function noteFor(o: KeyedLinkOptions, layout: LinkLayout): (r: PlannedRow) => string {
  const records = o.derived?.records;
  const own = records && (records === 'parent' ? layout.parentSide : layout.childSide).name;
  const why = o.dryRun
    ? 'its row of the records file would not be created (see the plan of its records)'
    : "its row of the records file was not created or matched (the records' rejects or ambiguous file says why)";
  return (r) => {
    const note = noteOf(r);
    return r.act.action === 'not_found' && r.act.side === own ? `${note}: ${why}` : note;
  };
}

function noteOf(r: PlannedRow): string {
  const a = r.act;
  switch (a.action) {
    case 'ambiguous':
      return `${a.side}: ${a.candidates.length} records have this key (${a.candidates.join(';')})`;
    case 'duplicate':
      return `line ${a.earlier} names the same pair with other fields: only that line is sent`;
    case 'repeated':
      return `repeats line ${a.earlier}: skipped (that row does what this one would)`;
    case 'not_found':
      return `no ${a.side} has ${a.key}${a.key.includes(';') ? ' (one pair a row; crm batch RESOURCE FILE --match FIELD splits a cell at ;)' : ''}`;
    case 'invalid':
      return a.reason;
    case 'replace':
      return `replaces ${a.before}`;
    case 'linked': {
      const other = r.held ? otherFields(r.extras, r.held) : [];
      return other.length > 0 ? `linked with ${other.join('; ')} (not changed: a second link is a no-op)` : '';
    }
    default:
      return '';
  }
}

type SendDeps = KeyedLinkDeps & { names?: WayBack; job: string; rejectsPath: string; base: string; shape: RowShape };

/** The sending pass: the rows' files, then one request per row to send (its way-back line first). */
async function sendPlan(o: KeyedLinkOptions, layout: LinkLayout, plan: LinkPlan, deps: SendDeps) {
  const note = noteFor(o, layout);
  const rejects = await createRejectsWriter(deps.rejectsPath, { ...deps.shape, kept: warnKept((m) => deps.warn(m)) });
  const ambiguous = await RowsOut.create(`${deps.base}.ambiguous.csv`, deps.shape, ['_line', '_side', '_candidates']);
  const wayBack =
    deps.names &&
    new WayBackLog(o.remove ? deps.names.unlinked : deps.names.linked, layout, o.remove ? 'unlinked' : 'linked');
  const counts: SentCounts = { linked: 0, removed: 0, set: 0, replaced: 0, gone: 0, not_linked: 0 };
  counts.not_linked = plan.counts.not_linked ?? 0;
  // `unsure`: requests under way when stopped (the server may have made them; the linked file holds them)
  let [failed, requests, unsure, answered] = [0, 0, 0, 0];
  const pool = new Pool(o.concurrency);
  const stop = () => deps.signal?.aborted === true;
  // a request's key is this run's: its retries are replayed, but a later run (after a kill, or the link removed since)
  // sends what its own read found missing under keys of its own, never a replay of an earlier run's answer (the trial:
  // a link removed and imported again was "linked" from the server's cache, and never made)
  const run = randomUUID();
  try {
    for (const r of plan.rows) {
      const a = r.act;
      if (a.action === 'ambiguous')
        ambiguous.add(
          r.raw,
          [String(r.line), a.side, serverCell(a.candidates.join(';'))],
          [r.line, a.side, a.candidates],
        );
      if (['not_found', 'duplicate', 'invalid'].includes(a.action))
        rejects.add(
          r.raw,
          r.line,
          a.action === 'invalid' ? a.code : a.action === 'duplicate' ? 'DUPLICATE_KEY' : 'NOT_FOUND',
          note(r),
        );
      if (!('parentId' in a) || !SENDS.includes(a.action)) continue;
      const started = await pool.run(async () => {
        await wayBack!.add(r);
        requests++;
        try {
          const gone = await send(deps.client, layout, r, run, deps.signal);
          counts[gone ? 'not_linked' : DONE[a.action as keyof typeof DONE]]++;
          deps.progress?.(`${o.remove ? 'unlinking' : 'linking'}: ${++answered} of ${plan.sends} sent…`);
        } catch (err) {
          if (!(err instanceof CrmError) || err instanceof InterruptedError) {
            if (stop()) unsure++;
            throw err;
          }
          // a 404 to a link or set: a record of the pair is gone (deleted since a backup was written): not found
          if (err instanceof NotFoundError && err.status === 404) counts.gone++;
          else failed++;
          rejects.add(r.raw, r.line, err.code ?? `HTTP_${err.status ?? 'ERROR'}`, err.message);
        }
      }, stop);
      if (!started) break;
    }
    await pool.drain();
    if (stop()) throw new InterruptedError('interrupted');
    const files = {
      rejects: await rejects.commit(),
      // the hint says to edit it: an edited one is kept under its own name, never overwritten (the trial's rerun)
      ambiguous_kept: ambiguous.rows > 0 ? ((await ambiguous.commitKeeping(deps.clock.now())) ?? null) : null,
      ambiguous: ambiguous.rows > 0 ? `${deps.base}.ambiguous.csv` : (await ambiguous.discard(), null),
      ...(await wayBack?.close()),
    };
    return { counts, failed, requests, files: { linked: null, unlinked: null, ...files } };
  } catch (err) {
    await Promise.all([rejects.discard(), ambiguous.discard(), wayBack?.close()]);
    if (!(err instanceof InterruptedError) && !stop()) throw err;
    throw interrupted(o, plan.sends, { ...counts, unsure }, o.remove ? deps.names?.unlinked : deps.names?.linked);
  }
}

/** `gone`: rows the server answered 404 when sent (a record of the pair not there) */
type SentCounts = Record<'linked' | 'removed' | 'set' | 'replaced' | 'not_linked' | 'gone', number>;

/** What a sent row counts as. */
const DONE = { link: 'linked', remove: 'removed', set: 'set', replace: 'replaced' } as const;

/** Ctrl-C: what was done, and how to go on (the trial: only "interrupted" was said). */
function interrupted(o: KeyedLinkOptions, planned: number, c: Record<string, number>, file?: string): InterruptedError {
  const made = (c.linked ?? 0) + (c.removed ?? 0) + (c.set ?? 0) + (c.replaced ?? 0);
  const verb = o.remove ? 'removed' : 'linked';
  const unsure = c.unsure ?? 0;
  const kept = file && made + unsure > 0 ? `; what this run ${verb} so far is in ${file}` : '';
  // the trial: Ctrl-C said fewer than the server held; those under way may have been made
  const underWay = unsure > 0 ? `, and ${unsure} more under way when stopped (made or not: the server knows)` : '';
  const what = `${verb} ${made} of the ${planned} planned${underWay}`;
  return new InterruptedError(`interrupted: ${what} (${o.parent} ${o.relation})`, {
    hint: `run the same command again to finish the job: it reads again, and sends only what is missing by then${kept}`,
  });
}

/** The request of a row to send; true when the link to remove was already gone (a 404: someone else removed it). */
async function send(
  client: HttpClient,
  layout: LinkLayout,
  r: PlannedRow,
  run: string,
  signal?: AbortSignal,
): Promise<boolean> {
  const a = r.act as { action: string; parentId: string; childId: string };
  const path = `/${layout.parent}/${pathSegment(a.parentId)}/${layout.relation}`;
  const key = `crm-links-${createHash('sha256').update(`${run}\0${a.action}\0${a.parentId}\0${a.childId}`).digest('hex').slice(0, 40)}`;
  if (a.action === 'link' || a.action === 'set' || a.action === 'replace') {
    const body = { [layout.childKey]: a.childId, ...r.extras };
    await client.request({
      method: layout.association ? 'PUT' : 'POST',
      path,
      body,
      idempotencyKey: key,
      expect: 'success',
      signal,
    });
    return false;
  }
  try {
    if (layout.association && r.before)
      await client.request({
        method: 'PUT',
        path,
        body: { [layout.childKey]: r.before },
        idempotencyKey: key,
        expect: 'success',
        signal,
      });
    else if (layout.association) await client.request({ method: 'DELETE', path, expect: 'success', signal });
    else
      await client.request({ method: 'DELETE', path: `${path}/${pathSegment(a.childId)}`, expect: 'success', signal });
    return false;
  } catch (err) {
    if (err instanceof NotFoundError && err.status === 404) return true;
    throw err;
  }
}
