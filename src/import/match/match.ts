// The match stage (engine.ts, `--match` only; CONTRACT §7b): the check pass's rows against what the CRM holds, one
// action per row, written to the plan spool the send stage reads — or, when an interrupted run of this job made a plan
// the earlier stage found, that plan, resumed under the same keys (nothing read, nothing sent twice). The journal stage
// pins a new plan beside the journal; a run after a finished one reads the CRM again and makes a new plan under new
// keys, so a change made since by someone else is seen.
import { tmpdir } from 'node:os';
import type { MatchPlan, StageDeps } from '../types.js';
import type { MatchSlice } from '../plan.js';
import type { ScanResult } from '../check/check.js';
import { Spool } from '../check/spool.js';
import { PlanFile } from '../files/way-back.js';
import { rowShapeOf } from '../files/outputs.js';
import { checkMatchColumns, matchRows, type MatchRowsOptions } from './plan-rows.js';

/** The match stage's value: the plan, where its rows are (none for a dry run), and what it sends. */
export interface Matched {
  plan: MatchPlan;
  spool?: Spool;
  /** the plan an interrupted run made, sent as it was */
  resumed: boolean;
  /** `--plan FILE`, written by this run */
  planCsv?: string;
  /** the fields its updates change, and whether it creates: the way-back files it needs */
  changed: string[];
  creates: boolean;
}

export async function match(
  slice: MatchSlice,
  scan: ScanResult,
  rows: Spool,
  pinned: { path: string; at: string } | undefined,
  deps: StageDeps,
): Promise<Matched> {
  const { input, fields } = slice;
  checkMatchColumns(scan, fields, input.name);
  const tmp = deps.journalDir ?? tmpdir();
  if (pinned) {
    deps.warn?.(
      `resuming the plan an interrupted run made (${pinned.at}): what it did not finish is sent, under the same keys`,
    );
    if (slice.planPath)
      deps.warn?.(
        `--plan ${slice.planPath}: not written again for a resumed plan (the run that made it wrote it, if asked)`,
      );
    const spool = Spool.existing(pinned.path, tmp);
    const zero = {
      create: 0,
      update: 0,
      unchanged: 0,
      ambiguous: 0,
      duplicate: 0,
      invalid: 0,
      requests: 0,
      read_requests: 0,
    };
    const plan: MatchPlan = {
      resource: slice.resource,
      rows: scan.rows,
      read: `none: resuming the plan made ${pinned.at}`,
      ...zero,
      changes: {},
    };
    return { plan: { ...plan, resumed: pinned.at }, spool, resumed: true, ...(await planShape(spool)) };
  }
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
  const plan = await matchRows({ ...o, maps: slice.maps, name: input.name, warn: deps.warn }, scan).catch(
    async (err: unknown) => {
      await Promise.all([out?.remove(), planFile?.drop()]);
      throw err;
    },
  );
  await planFile?.commit().catch(async (err: unknown) => {
    await out?.remove();
    throw err;
  });
  return {
    plan,
    spool: out,
    resumed: false,
    planCsv: slice.planPath,
    changed: Object.keys(plan.changes),
    creates: plan.create > 0,
  };
}

/** What a plan sends: the fields its updates change, and whether it creates (a resumed plan's, read back from its spool). */
async function planShape(plan: Spool): Promise<{ changed: string[]; creates: boolean }> {
  const fields = new Set<string>();
  let creates = false;
  for await (const e of plan.entries()) {
    if (e.chunk?.update) for (const f of Object.keys(e.chunk.update.before())) fields.add(f);
    else if (e.chunk) creates = true;
  }
  return { changed: [...fields], creates };
}
