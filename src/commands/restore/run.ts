// `crm restore DIR` (CONTRACT §10, issue 31): a snapshot's records into the current profile's organization. The run
// reads, then sends: each collection planned first (plan.ts: the snapshot, the target listed once, a decision per
// record), the plans shown (a dry run stops there), then each collection restored in order (restore-step.ts), an
// earlier collection's new ids translating a later one's references. One run per target at a time (its lock).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ResourceName } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import { maskKey } from '../../http/mask.js';
import { keyIdentity } from '../../import/index.js';
import { trimBase } from '../../import/shapes.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { HashTable } from '../../util/hash-table.js';
import { ensureDir, removeStaleTemps } from '../../util/fs.js';
import { takeProcessLock } from '../../util/process-lock.js';
import { textLines } from '../../util/text-lines.js';
import { parseJson } from '../../json/exact-json.js';
import { idText } from '../../api/ids.js';
import type { Ctx } from '../context.js';
import { shellWord } from '../shared/command-line.js';
import { capHeap } from '../shared/heap.js';
import type { Manifest } from '../snapshot/types.js';
import type { RestoreOptions } from './command.js';
import { DEFAULT_MATCH, RESTORE_ORDER } from './decide.js';
import { IdMap, idMapPath, targetName } from './id-map.js';
import {
  checkMatchFields,
  planCollection,
  plannedTarget,
  openPlanFile,
  writePlanFile,
  type CollectionPlan,
  type PlanOptions,
} from './plan.js';
import { leftCreateFiles, restoreStep, type StepResult } from './restore-step.js';
import { restoreLinks, snapshotKinds } from './links.js';
import { readOwners } from './owners.js';
import { checkTargetKey } from './target-key.js';
import { confirmRestore, hintGlobals, report, showPlan, stopped, withProgress } from './output.js';

export async function runRestore(opts: RestoreOptions, ctx: Ctx): Promise<void> {
  capHeap();
  const { dir, manifest, chosen, matches, owners } = await readArguments(opts, ctx);
  const planFile = opts.plan !== undefined ? await openPlanFile(opts.plan) : undefined;
  const client = await ctx.client({ concurrencyFlag: true });
  const hints = hintGlobals(ctx.globals, client.baseUrl);
  const restoreDir = path.join(dir, 'restore');
  const workDir = path.join(restoreDir, targetName(client.baseUrl));
  ensureDir(workDir);
  // one restore into an organization at a time, from any folder (two copies of one snapshot restored at once each
  // created what the other had: their id maps did not know each other's records)
  const locks = path.join(ctx.configDir(), 'restore');
  ensureDir(locks);
  const release = await takeProcessLock(path.join(locks, `${targetName(client.baseUrl)}.lock`), (pid) =>
    restoringElsewhere(client.baseUrl, pid),
  );
  // what a killed run left (its plan's and index's temporary files, a create file never committed): crm's own files
  const mapPath = idMapPath(dir, client.baseUrl);
  await removeStaleTemps(workDir, ctx.clock.now(), () => true);
  await removeStaleTemps(restoreDir, ctx.clock.now(), (n) => n === path.basename(mapPath));
  const profile = await ctx.profile();
  const key = { id: keyIdentity(profile.apiKey), mask: profile.apiKey ? maskKey(profile.apiKey) : undefined };
  await checkTargetKey(workDir, key, false).catch(async (err: unknown) => {
    await release();
    throw err;
  });
  const idMap = await IdMap.open(mapPath);
  const plans: CollectionPlan[] = [];
  try {
    const sameOrg = trimBase(manifest.base_url) === trimBase(client.baseUrl);
    // a dry run's links ask where the plan puts each record (plannedTarget): only then is that kept by id
    const at = { client, dir, workDir, sameOrg, idMap, signal: ctx.signal, lineOf: opts.dryRun && opts.links };
    plans.push(...(await withProgress(ctx, (say) => planAll(chosen, { matches, manifest }, at, say))));
    if (planFile) await writePlanFile(planFile, plans, (m) => !ctx.globals.quiet && ctx.warn(m));
    const journalDir = path.join(ctx.configDir(), 'imports');
    const linking = { dir, workDir, client, idMap, sameOrg, journalDir, clock: ctx.clock, signal: ctx.signal };
    const warn = (m: string) => ctx.warn(m);
    if (opts.dryRun) {
      const where = (r: string, id: string) => {
        const plan = plans.find((p) => p.resource === r);
        return plan && plannedTarget(plan, id);
      };
      const links = opts.links
        ? await restoreLinks({ ...linking, restored: chosen, dryRun: true, planned: where, warn })
        : undefined;
      showPlan(ctx, client, { target: client.baseUrl, sameOrg, plans, dryRun: true, links });
      return;
    }
    const linksAfter = opts.links === true && snapshotKinds(dir).length > 0;
    showPlan(ctx, client, { target: client.baseUrl, sameOrg, plans, dryRun: false, linksAfter });
    await confirmRestore(ctx, opts, plans, sameOrg, hints);
    // the key is the target's once the server has taken it (the plan read with it) and it is about to send (the fourth
    // trial: a run refused 401 with another organization's key had tied the target to that key)
    await checkTargetKey(workDir, key, true);
    const engine = { baseUrl: client.baseUrl, keyId: key.id, keyMask: key.mask, journalDir };
    const started = ctx.clock.now();
    const results: StepResult[] = [];
    const sending = { client, engine, clock: ctx.clock, signal: ctx.signal, warn };
    const step = { ...sending, idMap, workDir, owners: { ...sending, sameOrg, owners } };
    for (const plan of plans)
      results.push(
        await withProgress(ctx, (say) => restoreStep(plan, { ...step, onProgress: say })).catch((err: unknown) =>
          stopped(err, plan.resource, opts, hints, { workDir, idMap: mapPath }),
        ),
      );
    const links = opts.links
      ? await withProgress(ctx, (say) =>
          restoreLinks({ ...linking, restored: chosen, dryRun: false, warn, progress: say }),
        ).catch((err: unknown) => stopped(err, 'links', opts, hints))
      : undefined;
    const elapsedMs = ctx.clock.now() - started;
    report(ctx, { opts, globals: hints, idMap, plans, results, links, elapsedMs, requests: client.stats.requests });
  } finally {
    await planFile?.discard();
    for (const plan of plans) plan.decisions?.close();
    idMap.close();
    await release();
  }
}

/** The folder and the flags, checked before anything is read from the target (exit 2 naming what is wrong). */
async function readArguments(opts: RestoreOptions, ctx: Ctx) {
  if (opts.dir.trim() === '') throw new UsageError('DIR must name a folder written by crm snapshot');
  const dir = path.resolve(opts.dir);
  const manifest = await readManifest(dir, opts.dir);
  const chosen = chooseCollections(opts.resources, manifest, opts.dir);
  if (!manifest.complete && !ctx.globals.quiet) ctx.warn(incompleteText(manifest, opts.dir, chosen));
  // the third trial: --links on a snapshot taken without it said nothing
  if (opts.links && snapshotKinds(dir).length === 0 && !ctx.globals.quiet)
    ctx.warn(
      `${sanitizeForTerminal(opts.dir)} holds no links (crm snapshot DIR --links keeps them): --links restores none`,
    );
  const matches = parseMatches(opts.match, chosen);
  const owners = await readOwners(opts.owners);
  for (const m of opts.match ?? []) {
    const resource = m.slice(0, m.indexOf('=')).trim() as ResourceName;
    await checkMatchFields(dir, resource, matches[resource] ?? []);
  }
  return { dir, manifest, chosen, matches, owners };
}

/**
 * Each collection's plan, in order (a later one counts the references an earlier one's plan maps); a collection whose
 * create file an interrupted run left is that file, resumed, not planned again.
 */
async function planAll(
  chosen: readonly ResourceName[],
  given: { matches: Partial<Record<ResourceName, readonly string[]>>; manifest: Manifest },
  at: Omit<PlanOptions, 'resource' | 'fields' | 'willMap' | 'last' | 'onProgress' | 'expected'>,
  onProgress: (text: string) => void,
): Promise<CollectionPlan[]> {
  const willMap = new HashTable();
  const plans: CollectionPlan[] = [];
  for (const [i, resource] of chosen.entries()) {
    const fields = given.matches[resource] ?? [];
    const [left] = await leftCreateFiles(at.workDir, resource);
    // the last collection's records are no later one's references: not kept (a million contacts, 25 MB); it reads
    // the earlier ones' all the same (a dry run's interactions counted every contact reference "kept")
    const last = i === chosen.length - 1;
    plans.push(
      left !== undefined
        ? await resumedPlan(resource, at.dir, fields, left, willMap)
        : await planCollection({
            ...at,
            resource,
            fields,
            explicit: fields !== DEFAULT_MATCH[resource],
            willMap,
            last,
            expected: given.manifest.collections[resource]?.records,
            onProgress,
          }),
    );
  }
  return plans;
}

/** DIR/manifest.json as `crm snapshot` writes it: exit 2 naming what is wrong. */
async function readManifest(dir: string, shown: string): Promise<Manifest> {
  const file = path.join(dir, 'manifest.json');
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(
      `${sanitizeForTerminal(path.join(shown, 'manifest.json'))}: ${err.code === 'ENOENT' ? 'not found' : err.message} (is ${sanitizeForTerminal(shown)} a folder written by crm snapshot?)`,
    );
  });
  let m: Partial<Manifest>;
  try {
    m = JSON.parse(text) as Partial<Manifest>;
  } catch (err) {
    throw new UsageError(`${sanitizeForTerminal(file)}: not JSON (${(err as Error).message})`);
  }
  if (typeof m.base_url !== 'string' || m.collections === null || typeof m.collections !== 'object')
    throw new UsageError(`${sanitizeForTerminal(file)}: not a snapshot's manifest (no "base_url" or "collections")`);
  return m as Manifest;
}

/** A snapshot an interrupted `crm snapshot` left: what a restore takes of it, and how to finish it first. */
function incompleteText(manifest: Manifest, shown: string, chosen: readonly ResourceName[]): string {
  const partial = Object.entries(manifest.collections)
    .filter(([name, c]) => !c.complete && (RESTORE_ORDER as readonly string[]).includes(name))
    .map(([name]) => name);
  const left = partial.length ? `; not ${partial.join(', ')}, which it holds only in part` : '';
  return (
    `The snapshot in ${sanitizeForTerminal(shown)} is not complete (its run was interrupted): restoring ${chosen.join(', ') || 'nothing'}${left}. ` +
    `\`crm snapshot ${shellWord(shown)}\` finishes it.`
  );
}

/** `--resources`: collections the snapshot holds whole and that can be created; default every such one. */
function chooseCollections(value: string | undefined, manifest: Manifest, shown: string): ResourceName[] {
  const held = (r: string) => manifest.collections[r]?.complete === true;
  if (value === undefined) return RESTORE_ORDER.filter(held);
  const names = value.split(',').map((s) => s.trim());
  for (const name of names) {
    if (!(RESTORE_ORDER as readonly string[]).includes(name))
      throw new UsageError(
        `--resources: ${JSON.stringify(name)} is not a collection a restore creates records of; choose from ${RESTORE_ORDER.join(', ')}` +
          ' (meetings, recordings and bookings are read-only: never created)',
      );
    if (!held(name))
      throw new UsageError(
        `--resources: the snapshot in ${sanitizeForTerminal(shown)} does not hold ${name} whole` +
          (manifest.collections[name] ? ' (its collection is not complete: run the snapshot again to finish it)' : ''),
      );
  }
  return RESTORE_ORDER.filter((r) => names.includes(r));
}

/** `--match RES=FIELDS` (repeatable) over the defaults; `RES=` matches RES by none. */
function parseMatches(
  given: readonly string[] | undefined,
  chosen: readonly ResourceName[],
): Partial<Record<ResourceName, readonly string[]>> {
  const out: Partial<Record<ResourceName, readonly string[]>> = { ...DEFAULT_MATCH };
  for (const m of given ?? []) {
    const at = m.indexOf('=');
    const resource = m.slice(0, at).trim() as ResourceName;
    if (at < 0 || !chosen.includes(resource))
      throw new UsageError(
        `--match ${JSON.stringify(m)}: expected RES=FIELDS, RES one of ${chosen.join(', ')} (e.g. --match deals=name)`,
      );
    const fields = m
      .slice(at + 1)
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean);
    if (fields.includes('id'))
      throw new UsageError(`--match ${JSON.stringify(m)}: a record's id is looked up anyway; name other fields`);
    out[resource] = fields;
  }
  return out;
}

/** A collection whose create file an interrupted run left: resumed as it is, not planned again. */
async function resumedPlan(
  resource: ResourceName,
  dir: string,
  fields: readonly string[],
  left: string,
  willMap: HashTable,
): Promise<CollectionPlan> {
  // its records will be mapped: a later collection's references to them are translated, not "kept"
  let create = 0;
  for await (const line of textLines(left)) {
    create++;
    const id = idText((parseJson(line) as { id?: unknown }).id);
    if (id !== undefined) willMap.set(`${resource}\u0000${id}`, 2);
  }
  return {
    ...{ resource, file: path.join(dir, `${resource}.ndjson`), matchFields: fields, records: create, mapped: 0 },
    ...{ found: 0, matched: 0, ambiguous: 0, create, refsKept: 0, targetRecords: 0, readRequests: 0, resumed: left },
  };
}

function restoringElsewhere(target: string, pid: number | undefined): UsageError {
  const who = pid !== undefined ? `another crm (process ${pid})` : 'another crm';
  return new UsageError(
    `${who} is restoring a snapshot into ${sanitizeForTerminal(target)} right now; nothing was sent`,
    {
      hint:
        'wait for it to finish. Restore from the folder it restores from: each folder keeps its own id map, so a ' +
        'record that run created without a --match key would be created again from another folder',
    },
  );
}
