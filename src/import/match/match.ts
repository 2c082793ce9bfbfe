// The match stage (engine.ts, `--match` only; CONTRACT §7b, §7c): the check pass's rows against what the CRM holds,
// one action per row, written to the plan spool the send stage reads. Every run reads the CRM: one that resumes a job
// an interrupted run began (its plan and journal, found by the claim stage) checks the records that run changed or
// created before it counts them done (an undo or a colleague's change in between is planned again), and sends the
// creates it left in doubt again under that run's keys, so the server replays them (never created twice).
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import type { MatchPlan, StageDeps } from '../types.js';
import type { MatchSlice } from '../plan.js';
import type { ScanResult } from '../check/check.js';
import { Spool, type SpooledChunk } from '../check/spool.js';
import { PlanFile } from '../files/way-back.js';
import { rowShapeOf } from '../files/outputs.js';
import type { FinishedChunk, WayBackNames } from '../shapes.js';
import { matchRows, type EarlierRun, type MatchRowsOptions } from './plan-rows.js';

/** A job an interrupted run began, as the claim stage found it: its plan, and its journal (read only). */
export interface Pinned {
  path: string;
  at: string;
  /** the way-back files its journal names (none in a journal from before they were named: the plain names) */
  wayBack?: WayBackNames;
  journal: {
    runId: string;
    inDoubt(): number[];
    get(seq: number): Promise<FinishedChunk | undefined>;
    close(): Promise<void>;
  };
}

/** The match stage's value: the plan, where its rows are (none for a dry run), and what it sends. */
export interface Matched {
  plan: MatchPlan;
  spool?: Spool;
  /** this run resumes a job an interrupted run began: it adds to that run's way-back files */
  resumed: boolean;
  /** when that job began (ms): its journal keeps it, and a stdin job's way back is named by it */
  began?: number;
  /** the way-back files that job's journal names */
  wayBack?: WayBackNames;
  /** `--plan FILE`, written by this run */
  planCsv?: string;
  /** the fields its updates change, and whether it creates: the way-back files it needs */
  changed: string[];
  creates: boolean;
  /** a dry run: the lines of the rows it would create */
  createLines?: ReadonlySet<number>;
}

export async function match(
  slice: MatchSlice,
  scan: ScanResult,
  rows: Spool,
  pinned: Pinned | undefined,
  deps: StageDeps,
): Promise<Matched> {
  const { input, fields } = slice;
  const tmp = deps.journalDir ?? tmpdir();
  const earlier = pinned && (await earlierRun(pinned).finally(() => pinned.journal.close()));
  if (pinned)
    deps.warn?.(
      `resuming the job an interrupted run began (${pinned.at}): the CRM is read again, and what that run changed is checked before it is counted done`,
    );
  // read → match → plan: to a temporary spool the journal stage pins beside the journal once the run may send it
  const out = slice.dryRun ? undefined : await Spool.create(tmp);
  const planFile = slice.planPath
    ? await PlanFile.create(slice.planPath, await rowShapeOf(input, scan)).catch(async (err: unknown) => {
        await out?.remove();
        throw err;
      })
    : undefined;
  const readIndex = deps.readIndex!;
  const read: MatchRowsOptions['read'] = (req) =>
    readIndex(req, (p) => deps.report('read', { rows: p.records, chunks: p.requests }, null));
  const o = {
    resource: slice.resource,
    fields,
    rows,
    out,
    planFile,
    read,
    chunkSize: slice.chunkSize,
    signal: deps.signal,
  };
  const createLines = slice.dryRun ? new Set<number>() : undefined;
  const matching = { ...o, maps: slice.maps, name: input.name, warn: deps.warn, earlier, creates: createLines };
  const plan = await matchRows(matching, scan).catch(async (err: unknown) => {
    await Promise.all([out?.remove(), planFile?.drop()]);
    throw err;
  });
  await planFile?.commit().catch(async (err: unknown) => {
    await out?.remove();
    throw err;
  });
  return {
    plan: pinned ? { ...plan, resumed: pinned.at } : plan,
    spool: out,
    resumed: pinned !== undefined,
    ...(pinned ? { began: Date.parse(pinned.at), ...(pinned.wayBack ? { wayBack: pinned.wayBack } : {}) } : {}),
    planCsv: slice.planPath,
    changed: Object.keys(plan.changes),
    creates: plan.create > 0,
    ...(createLines ? { createLines } : {}),
  };
}

/**
 * What an interrupted run of this job did, from its plan and journal: the lines of the records it changed or created
 * (checked against the CRM again, not trusted), and the creates it sent without an answer (sent again under its key).
 * An update left in doubt is planned again from what the CRM holds: a PATCH sent twice sets the same values.
 */
export async function earlierRun(pinned: Pinned): Promise<EarlierRun> {
  const { journal } = pinned;
  const touched = new Set<number>();
  const inDoubt = new Map<number, SpooledChunk>();
  const doubt = new Set(journal.inDoubt());
  for await (const e of Spool.existing(pinned.path, dirname(pinned.path)).entries()) {
    // a row a run before it did (resumed more than once): still this job's, still checked
    if (e.settled?.action === 'done') touched.add(e.settled.line);
    const c = e.chunk;
    if (!c) continue;
    const done = await journal.get(c.seq);
    if (done && done.lines.length === c.lines.length && done.lines.every((l, i) => l === c.lines[i]))
      done.ids.forEach((id, i) => id !== null && touched.add(c.lines[i]!));
    // in doubt in that run, or carried from a run before it (kept under its key until answered, whatever befell it)
    else if (!c.update && (doubt.has(c.seq) || c.runId !== undefined))
      inDoubt.set(c.lines[0]!, { ...c, runId: c.runId ?? journal.runId });
  }
  return { touched, inDoubt, lines: new Set([...inDoubt.values()].flatMap((c) => c.lines)) };
}
