// What `crm restore DIR` prints (CONTRACT §10): the plan before anything is sent (stderr, or with `--dry-run -o json`
// stdout), the summary after, and the exit it makes (9: a record not restored, an owner not set; 130: Ctrl-C).
import path from 'node:path';
import { InterruptedError, PartialFailureError, UsageError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { costAtLimitText } from '../../output/eta.js';
import { count, plural } from '../../output/plural.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import type { Ctx } from '../context.js';
import { progressLine } from '../links/keyed.js';
import { findResource } from '../../api/resources.js';
import { ASK_FROM_WRITES } from '../batch/operation.js';
import { ask } from '../shared/ask.js';
import { crmCommand, shellWord } from '../shared/command-line.js';
import type { RestoreOptions } from './command.js';
import type { IdMap } from './id-map.js';
import type { KindResult } from './links.js';
import type { CollectionPlan } from './plan.js';
import type { StepResult } from './restore-step.js';

const CHUNK = 100;
/** The field people know a record of a collection without match fields by (a --match the plan suggests). */
const NAMED_BY: Record<string, string> = {
  deals: 'name',
  pipelines: 'name',
  segments: 'name',
  tasks: 'title',
  notes: 'body',
  interactions: 'title',
};

/** `deals=name`: a --match the plan suggests, for a collection people know a record of by a field (else none) */
const matchOf = (p: CollectionPlan) => (NAMED_BY[p.resource] ? `${p.resource}=${NAMED_BY[p.resource]}` : undefined);

/**
 * Creates of a collection without match fields into a target that holds records of it already: one of them there
 * under an id the id map does not know is made twice, and nothing can tell (the second trial: deals restored after
 * importing their backup, each one twice; the third: the same organization under another base URL, `localhost` for
 * `127.0.0.1`, and a `crm sandbox --from` copy, each restored into with every deal, task and note created again).
 */
const unmatchedCreates = (plans: readonly CollectionPlan[]) =>
  plans.filter((p) => p.create > 0 && p.matchFields.length === 0 && p.targetRecords > 0);

/** How the records to create were looked for: by their id (the same organization), else by the id map only. */
const lookedFor = (sameOrg: boolean) => (sameOrg ? 'their id' : 'the id map');

/**
 * Before anything is sent, without --yes: creates that may be records the target holds already (a collection without
 * match fields that it holds records of: see showPlan's warning) are asked about on a terminal and refused
 * without one (a second trial went on past the warning and made each deal twice); on a terminal, a plan of
 * ASK_FROM_WRITES creates or more asks too, as a reconcile does. Nothing has been sent when this refuses.
 */
export async function confirmRestore(
  ctx: Ctx,
  opts: RestoreOptions,
  plans: readonly CollectionPlan[],
  sameOrg: boolean,
  /** the globals a hint's command carries (hintGlobals) */
  hints: Ctx['globals'],
): Promise<void> {
  const creates = plans.reduce((n, p) => n + p.create, 0);
  const unmatched = unmatchedCreates(plans);
  if (opts.yes || (unmatched.length === 0 && (creates < ASK_FROM_WRITES || !ctx.interactive()))) return;
  const what = plans
    .filter((p) => p.create > 0)
    .map((p) => plural(p.create, findResource(p.resource)?.singular ?? p.resource, p.resource));
  // the commands to paste: by their fields (the suggested --match added), or as planned
  // never a placeholder (the fourth trial pasted `--match interactions=FIELDS`): only the fields known to name them
  const suggested = unmatched.flatMap((p) => matchOf(p) ?? []);
  const matched = { ...opts, match: [...(opts.match ?? []), ...suggested] };
  const ways =
    (suggested.length > 0 ? `to find any created again since by their fields: ${sameCommand(matched, hints)}; ` : '') +
    `to create them as planned: ${sameCommand(opts, hints, ['--yes'])} (--dry-run --plan FILE lists each record's decision first)`;
  if (!ctx.interactive())
    throw new UsageError(
      `refusing to create ${unmatched.map((p) => `${count(p.create)} ${p.resource}`).join(' and ')} looked for by ${lookedFor(sameOrg)} only, in a target that holds records of them already, without --yes: nothing was sent`,
      { hint: ways },
    );
  // the question alone on its line: wrapped at 80 columns, a longer one split "[y/" from "N]" (the third trial)
  ctx.warn(
    `This will create ${plural(creates, 'record')} (${what.join(', ')})${opts.links ? ', then make the links' : ''}.`,
  );
  const answer = await ask(ctx, 'Send? [y/N] ', 'nothing was sent');
  if (!/^y(es)?$/i.test(answer))
    throw new UsageError(`not confirmed${answer ? ` ("${answer.slice(0, 40)}")` : ''}: nothing was sent`, {
      hint: ways,
    });
}

const createRequests = (plans: readonly CollectionPlan[]) => plans.reduce((n, p) => n + Math.ceil(p.create / CHUNK), 0);

interface ShownPlan {
  target: string;
  sameOrg: boolean;
  plans: readonly CollectionPlan[];
  dryRun: boolean;
  links?: KindResult[];
  /** a run with --links: the links are read and planned after the records (their ids known then) */
  linksAfter?: boolean;
}

export function showPlan(ctx: Ctx, client: HttpClient, o: ShownPlan): void {
  const links = o.links?.map(linkJson);
  const requests = createRequests(o.plans) + (links ?? []).reduce((n, l) => n + l.to_make, 0);
  const reads =
    o.plans.reduce((n, p) => n + p.readRequests, 0) + (links ?? []).reduce((n, l) => n + l.read_requests, 0);
  for (const p of unmatchedCreates(o.plans))
    ctx.warn(
      `${p.resource}: the ${count(p.create)} to create are looked for by ${lookedFor(o.sameOrg)} only (${p.resource} have no match fields), ` +
        `and the target holds ${plural(p.targetRecords, 'record')} of them: any of those there under another id ` +
        `(${o.sameOrg ? "a delete's backup imported" : 'the organization the snapshot was taken of under another base URL, a copy of it, a backup imported'}) would be there twice; ` +
        `${matchOf(p) ? `--match ${matchOf(p)} finds them by their fields instead` : '--resources can leave them out'}.`,
    );
  if (o.dryRun && (ctx.format() === 'json' || ctx.format() === 'ndjson')) {
    const collections = o.plans.map((p) => ({ ...planJson(p), requests: Math.ceil(p.create / CHUNK) }));
    const json = { target: o.target, same_organization: o.sameOrg, collections, ...(links ? { links } : {}) };
    ctx.io.stdout.write(`${safeJson({ ...json, requests, read_requests: reads })}\n`);
    return;
  }
  if (ctx.globals.quiet && !o.dryRun) return;
  const lines = [
    `Restore into ${sanitizeForTerminal(o.target)} (${o.sameOrg ? 'the organization the snapshot was taken of: a record still there is found by its id' : 'not the organization the snapshot was taken of: records are found by the id map and --match only'}):`,
    ...o.plans.map((p) => `  ${planLine(p)}`),
    ...(links ?? []).map(
      (l) =>
        `  links ${l.kind}: ${l.links}: ${l.to_make} to make, ${l.there} there${l.left_out ? `, ${l.left_out} left out (a record not restored)` : ''}`,
    ),
    `${o.dryRun ? 'It would send' : 'Sending'} ${plural(requests, 'request')} (create chunks of ${CHUNK}${links ? ', a POST per link' : ''}) after ${plural(reads, 'read')}: ${costAtLimitText(requests, ctx.clock.now(), client.pace?.())}` +
      `${o.linksAfter ? "; then the links: each parent's links read once, a POST per link not there" : ''}` +
      // the trial: said with nothing to create
      `${o.plans.some((p) => p.create > 0) ? '; then a PATCH per created record whose owner differs' : ''}.`,
  ];
  ctx.warn(lines.join('\n'));
}

/** A kind of links as planned (a dry run) or made: `to_make` the POSTs (or PUTs), `there` those already there. */
function linkJson(k: KindResult) {
  const s = k.summary;
  const did = s && !s.dry_run;
  return {
    ...{ kind: k.kind, links: k.links, left_out: k.left_out },
    to_make: (s?.planned.link ?? 0) + (s?.planned.set ?? 0) + (s?.planned.replace ?? 0) + k.pending,
    there: (s?.planned.linked ?? 0) + (s?.planned.unchanged ?? 0),
    ...(did ? { made: s.linked + s.set + s.replaced, failed: s.failed + s.not_found + s.ambiguous } : {}),
    ...(did ? { linked_file: s.linked_file, rejects_file: s.rejects_file } : {}),
    read_requests: s?.read_requests ?? 0,
  };
}

function planJson(p: CollectionPlan) {
  return {
    ...{ resource: p.resource, records: p.records, mapped: p.mapped, found: p.found, matched: p.matched },
    ...{ create: p.create, ambiguous: p.ambiguous, references_kept: p.refsKept, match: p.matchFields },
    references_stale: p.refsStale ?? 0,
    ...{ target_records: p.targetRecords, read_requests: p.readRequests, resumed: p.resumed !== undefined },
  };
}

function planLine(p: CollectionPlan): string {
  if (p.resumed) return `${p.resource}: ${plural(p.create, 'record')} to create, left by an interrupted run: resumed`;
  const parts = [
    p.mapped && `${p.mapped} in the id map`,
    p.found && `${p.found} found by id`,
    p.matched && `${p.matched} matched by ${p.matchFields.join(',')}`,
    p.create && `${p.create} to create`,
    p.ambiguous && `${p.ambiguous} ambiguous (not restored)`,
    p.refsKept && `${plural(p.refsKept, 'reference')} to records not restored, kept as they are`,
    p.refsStale &&
      `${plural(p.refsStale, 'reference')} in records left as they are to records that come back with new ids (not changed)`,
  ].filter(Boolean);
  return `${p.resource}: ${plural(p.records, 'record')}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

export interface Report {
  /** the global flags a hint's command carries: the target named (hintGlobals) */
  globals: Ctx['globals'];
  links?: KindResult[];
  opts: RestoreOptions;
  idMap: IdMap;
  plans: readonly CollectionPlan[];
  results: readonly StepResult[];
  elapsedMs: number;
  requests: number;
}

/** The summary (stderr, or stdout with -o json); exit 9 when a record was not restored (ambiguous, failed, unsettled). */
export function report(ctx: Ctx, r: Report): void {
  const collections = r.results.map((s, i) => ({ ...planJson(r.plans[i]!), ...s }));
  const links = r.links?.map(linkJson);
  const notLinked = (links ?? []).reduce((n, l) => n + (l.failed ?? 0), 0);
  const notRestored = collections.reduce((n, c) => n + c.ambiguous + c.failed + c.unsettled, 0) + notLinked;
  const format = ctx.format();
  if (format === 'json' || format === 'ndjson')
    ctx.io.stdout.write(
      `${safeJson({ id_map: r.idMap.path, collections, ...(links ? { links } : {}), requests: r.requests, elapsed_ms: r.elapsedMs })}\n`,
    );
  else {
    const created = collections.reduce((n, c) => n + c.created, 0);
    const made = (links ?? []).reduce((n, l) => n + (l.made ?? 0), 0);
    const linkedFiles = (links ?? []).flatMap((l) => (l.linked_file ? [l.linked_file] : []));
    const files = collections.flatMap((c) => [c.ambiguous_file, c.rejects_file]).filter((f): f is string => f !== null);
    const ownersSet = sum(collections, (c) => c.owners_set);
    const [unmapped, fixed] = [
      sum(collections, (c) => c.owners_unmapped),
      sum(collections, (c) => c.owners_not_updatable),
    ];
    // the target's own folder beside its id map (`DIR/restore/<target>.ids.csv` → `DIR/restore/<target>`)
    const workDir = sanitizeForTerminal(path.relative(process.cwd(), r.idMap.path.replace(/\.ids\.csv$/, '')));
    const leftOut = (links ?? []).reduce((n, l) => n + (l.left_out ?? 0), 0);
    ctx.warn(
      [
        `Restored: ${plural(created, 'record')} created by this run; each snapshot id's id here is in ${sanitizeForTerminal(r.idMap.path)}.`,
        ...(links
          ? [
              `Links: ${plural(made, 'link')} made by this run` +
                (leftOut > 0
                  ? `; ${plural(leftOut, 'link')} of the snapshot left out (one of its records is not restored here: --dry-run names them by kind)`
                  : '') +
                (linkedFiles.length
                  ? `; each made is in ${workDir}/links.<kind>.linked.csv (\`crm links import PARENT RELATION FILE --remove\` takes them away).`
                  : '.'),
            ]
          : []),
        ...(ownersSet + unmapped + fixed > 0
          ? [
              `Owners: ${count(ownersSet)} given back as in the snapshot.` +
                (unmapped > 0
                  ? ` ${plural(unmapped, 'created record')} still ${unmapped === 1 ? 'belongs' : 'belong'} to the key's user: ${unmapped === 1 ? 'its' : 'their'} owner in the snapshot has no mapping here (--owners FILE, a CSV old_id,new_id, maps them).`
                  : '') +
                (fixed > 0
                  ? ` ${plural(fixed, 'created interaction')} keep the key's user as owner: interactions cannot be updated.`
                  : ''),
            ]
          : []),
        ...(files.length ? [`Not restored: see ${files.map((f) => sanitizeForTerminal(f)).join(', ')}`] : []),
      ].join('\n'),
    );
  }
  exitOf(r, collections, notRestored);
}

/** Exit 9 when a record was not restored (ambiguous, failed, unsettled) or a created record not given its owner. */
function exitOf(
  r: Report,
  collections: ReadonlyArray<ReturnType<typeof planJson> & StepResult>,
  notRestored: number,
): void {
  // owners a PATCH did not set (the records are there): their owners file sets them, as after any create
  const ownerless = collections.filter((c) => (c.owners_failed ?? 0) > 0 && c.owners_file);
  const ownersFailed = sum(ownerless, (c) => c.owners_failed);
  if (notRestored + ownersFailed === 0) return;
  const owners = ownerless.map((c) => crmCommand(r.globals, ['batch', c.resource, c.owners_file!, '--match', 'id']));
  const what = [
    ...(notRestored > 0
      ? [`${plural(notRestored, 'record')} of the snapshot ${notRestored === 1 ? 'was' : 'were'} not restored`]
      : []),
    ...(ownersFailed > 0
      ? [
          `${plural(ownersFailed, 'created record')} not given ${ownersFailed === 1 ? 'its' : 'their'} owner` +
            (ownerless[0]!.owners_not_set ? ` (${sanitizeForTerminal(ownerless[0]!.owners_not_set)})` : ''),
        ]
      : []),
  ];
  // the third trial: nothing said how to settle one (the id map: a line naming the record it is, the latest one wins)
  const ambiguous = collections.find((c) => c.ambiguous > 0);
  const settle = ambiguous
    ? `an ambiguous record is settled by naming the one it is: append the line ${ambiguous.resource},SNAPSHOT_ID,CANDIDATE_ID,matched ` +
      `(from ${sanitizeForTerminal(ambiguous.ambiguous_file ?? 'the ambiguous file')}) to ${shellWord(r.idMap.path)}`
    : undefined;
  throw new PartialFailureError(what.join('; '), {
    hint: [
      ...(settle ? [settle] : []),
      ...(notRestored > 0
        ? [
            `see the files named above; run the same command again once they are settled: ${sameCommand(r.opts, r.globals)}`,
          ]
        : []),
      ...(owners.length > 0
        ? [`the owners (a PATCH only where one differs; the records are there): ${owners.join(' ; ')}`]
        : []),
    ].join('\n'),
  });
}

/** Ctrl-C during a step: said as a restore's (which part; the same command finishes it), not as the engine's file. */
export function stopped(
  err: unknown,
  part: string,
  opts: RestoreOptions,
  globals: Ctx['globals'],
  /** the target's folder and id map, named when an earlier run's file cannot be finished with this key */
  target?: { workDir: string; idMap: string },
): never {
  // a create file an interrupted restore left, begun with another API key: the engine's way on (--no-resume) is not a
  // restore's (the trial's sandbox, started again with new keys, could not be restored into at all)
  if (err instanceof UsageError && / with another API key /.test(err.message) && target)
    throw new UsageError(`${part}: ${err.message.replace(/ This key has no journal[^]*$/, '')}`, {
      hint:
        `that file is an interrupted restore's: if its organization is this one, finish it with the key it began with (its profile: ${sameCommand(opts, { ...globals, profile: 'PROFILE' })}); ` +
        `if that organization is gone (a sandbox started again), its records are not there: remove ${shellWord(target.workDir)} and ${shellWord(target.idMap)}, then run ${sameCommand(opts, globals)}`,
    });
  if (!(err instanceof InterruptedError)) throw err;
  const detail = err.message.replace(/^interrupted:?\s*/, '').trim();
  throw new InterruptedError(`interrupted while restoring ${part}${detail ? ` (${detail})` : ''}`, {
    hint: `run the same command again to finish (what was created is found, never created twice): ${sameCommand(opts, globals)}`,
  });
}

/** The command run again, with the profile (or base URL) it was given: pasted, it restores into the same organization. */
export function sameCommand(opts: RestoreOptions, globals: Ctx['globals'], more: readonly string[] = []): string {
  const words = ['restore', opts.dir];
  if (opts.resources !== undefined) words.push('--resources', opts.resources);
  for (const m of opts.match ?? []) words.push('--match', m);
  if (opts.links) words.push('--links');
  if (opts.owners !== undefined) words.push('--owners', opts.owners);
  return crmCommand(globals, [...words, ...more]);
}

const sum = <T>(xs: readonly T[], f: (x: T) => number | undefined): number => xs.reduce((n, x) => n + (f(x) ?? 0), 0);

/**
 * One phase of a restore (planning, a collection's creates, the links) with a progress line on a terminal (the trial
 * watched 45 s of links with nothing on screen); with --verbose and no terminal, each text as a line instead.
 */
export async function withProgress<T>(ctx: Ctx, run: (say: (text: string) => void) => Promise<T>): Promise<T> {
  const line = progressLine(ctx);
  try {
    return await run((text) => (line.enabled ? line.update(text) : ctx.globals.verbose && ctx.warn(text)));
  } finally {
    await line.stop();
  }
}

/**
 * The global flags a restore's hint carries: the profile or base URL given, else the target's base URL (a restore
 * aimed by CRM_BASE_URL and CRM_API_KEY, its hint pasted in a shell without them, went to the default profile's
 * organization and restored a record deleted there on purpose). With another key, that base URL is refused (401).
 */
export const hintGlobals = (globals: Ctx['globals'], target: string): Ctx['globals'] =>
  globals.profile || globals.baseUrl ? globals : { ...globals, baseUrl: target };
