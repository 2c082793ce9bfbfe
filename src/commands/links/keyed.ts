// `crm links import` by natural key and `--remove` (CONTRACT §7d): the run (src/import/link-keys/run.ts) with its plan
// shown before anything is sent, its summary (a table on stderr, or JSON on stdout) and the command that takes back
// what it made; exit 9 when a row was ambiguous, not found, a duplicate, invalid or failed.
import { join } from 'node:path';
import { PartialFailureError } from '../../http/errors.js';
import { costAtLimitText } from '../../output/eta.js';
import { count, plural } from '../../output/plural.js';
import { createProgress } from '../../output/progress.js';
import { keptText } from '../../import/files/outputs.js';
import { findAssociation, findLink } from '../../api/links.js';
import { parentField } from '../../import/operation.js';
import { writeRecord } from '../../output/writers.js';
import { SENDS } from '../../import/link-keys/resolve.js';
import { runKeyedLinks, type LinkPlanSummary, type LinkSummary } from '../../import/link-keys/run.js';
import type { Ctx } from '../context.js';
import { capHeap } from '../shared/heap.js';
import { crmCommand } from '../shared/command-line.js';
import { forPeople } from '../batch/progress-text.js';
import { forStderr, forTerminal } from '../../output/width.js';
import type { PaceInfo } from '../../http/pace-info.js';
import type { LinkOptions } from './command.js';

/** The actions a plan counts, in the order it shows them, and their words. */
const ACTIONS: Array<[string, string]> = [
  ['link', 'to link'],
  ['linked', 'linked already (no request)'],
  ['linked_otherwise', '  of those, linked with another type (not changed; --plan shows them)'],
  ['remove', 'to unlink'],
  ['not_linked', 'not linked (no request)'],
  ['set', 'to set'],
  ['replace', 'to replace (another was set)'],
  ['unchanged', 'unchanged'],
  ['ambiguous', 'ambiguous (a key names two or more records)'],
  ['not_found', 'not found'],
  ['duplicate', 'duplicate (an earlier row names the pair with other fields)'],
  ['repeated', 'repeating an earlier row (skipped)'],
  ['invalid', 'invalid'],
];

/** A progress line on standard error when it is a terminal (not with --quiet): a links run's reading, then sending. */
export const progressLine = (ctx: Ctx) =>
  createProgress({
    stream: ctx.io.stderr,
    enabled: Boolean(ctx.io.stderr.isTTY) && !ctx.globals.quiet,
    color: ctx.globals.stderrColor,
  });

/** The flags given that only a run by id takes (the batch engine's). */
function idPathFlags(o: LinkOptions): string[] {
  const given: Array<[string, boolean]> = [
    ['--results', o.results !== undefined],
    ['--strict', o.strict !== undefined],
    ['--input-format', o.inputFormat !== undefined && o.inputFormat !== 'csv'],
    ['--no-resume', o.resume === false],
  ];
  return given.flatMap(([flag, on]) => (on ? [flag] : []));
}

/** The run by natural key; false when the file names every side by id (the batch engine's plain path). */
export async function runKeyed(o: LinkOptions, ctx: Ctx): Promise<boolean> {
  capHeap();
  const client = await ctx.client({ concurrencyFlag: true });
  // a line on a terminal while the sides are read, another while the requests go (the plan printed between)
  const line = () => progressLine(ctx);
  let progress = line();
  const summary = await runKeyedLinks(
    {
      ...{ parent: o.parent, relation: o.relation, file: o.file!, maps: o.map, remove: o.remove === true },
      ...{ dryRun: o.dryRun === true, planPath: o.plan, rejectsPath: o.rejects, concurrency: o.concurrency ?? 4 },
      ...{ encoding: o.encoding, baseUrl: client.baseUrl, idPathFlags: idPathFlags(o) },
    },
    {
      client,
      journalDir: join(ctx.configDir(), 'imports'),
      cwd: process.cwd(),
      clock: ctx.clock,
      signal: ctx.signal,
      stdin: ctx.io.stdin as NodeJS.ReadableStream as import('node:stream').Readable,
      warn: (m) => ctx.warn(m),
      progress: (text) => progress.update(text),
      onPlan: async (plan) => {
        await progress.stop();
        if (!o.dryRun) showPlan(ctx, plan, client.pace?.());
        progress = line();
      },
    },
  ).finally(() => progress.stop());
  if (!summary) return false;
  if (summary.dry_run) {
    await printDry(ctx, summary, client.pace?.());
    return true;
  }
  await printLinkSummary(ctx, summary, { file: o.file });
  return true;
}

/** The plan's lines: every action's count, the requests, the least time the rate limit allows them. */
function planLines(p: LinkPlanSummary, atLimit: (n: number) => string): string[] {
  const lines = ACTIONS.flatMap(([a, words]) =>
    (p.counts[a] ?? 0) > 0 ? [`  ${count(p.counts[a]!).padStart(7)}  ${words}`] : [],
  );
  return [
    `Plan for ${plural(p.rows, 'row')} of ${p.resource} links${p.resumed ? ' (resuming an unfinished run: its files are added to)' : ''}:`,
    ...lines,
    ...(p.other_relations > 0 ? [`  ${plural(p.other_relations, 'row')} of other links in the file left out`] : []),
    p.requests === 0
      ? `Read ${plural(p.read_requests, 'request')}; nothing to send.`
      : `Read ${plural(p.read_requests, 'request')}; to send ${plural(p.requests, 'request')}: ${atLimit(p.requests)}.`,
  ];
}

function showPlan(ctx: Ctx, p: LinkPlanSummary, pace: PaceInfo | undefined) {
  if (ctx.globals.quiet || !ctx.io.stderr.isTTY) return;
  const lines = planLines(p, (n) => costAtLimitText(n, ctx.clock.now(), pace));
  ctx.io.stderr.write(forStderr(ctx.io.stderr, lines.join('\n')) + '\n');
}

/** A dry run's plan: its lines on stdout, or its JSON (unless `inJson`: a records file's plan holds it, linkPlanRecord). */
export async function printDry(
  ctx: Ctx,
  s: LinkSummary,
  pace: PaceInfo | undefined,
  o: { inJson?: boolean } = {},
): Promise<void> {
  const plan = { resource: s.resource, rows: s.rows, read_requests: s.read_requests, requests: requestsOf(s) };
  if (ctx.format() !== 'table') {
    if (!o.inJson) await writeRecord(ctx.format(), ctx.io.stdout, linkPlanRecord(s));
    return;
  }
  const p: LinkPlanSummary = { ...plan, counts: countsOf(s), other_relations: 0, resumed: false };
  // a records file's links follow its records' plan, which says it
  const dry = o.inJson ? [] : ['Dry run: nothing was sent.'];
  const lines = [...planLines(p, (n) => costAtLimitText(n, ctx.clock.now(), pace)), ...dry];
  ctx.io.stdout.write(forTerminal(ctx.io.stdout, lines.join('\n')) + '\n');
}

/** A dry run's plan as -o json shows it. */
export function linkPlanRecord(s: LinkSummary): Record<string, unknown> {
  const plan = { resource: s.resource, rows: s.rows, read_requests: s.read_requests, requests: requestsOf(s) };
  return { ...plan, ...countsOf(s), plan_file: s.plan_file, dry_run: true };
}

/** A dry run's summary holds the plan's counts under their actions' names. */
function countsOf(s: LinkSummary): Record<string, number> {
  return Object.fromEntries(ACTIONS.map(([a]) => [a, s.planned[a] ?? 0]));
}

const requestsOf = (s: LinkSummary): number => SENDS.reduce((n, a) => n + (s.planned[a] ?? 0), 0);

const KEYS =
  `resource rows linked already_linked removed not_linked set replaced unchanged not_found ambiguous duplicate
  repeated invalid failed requests read_requests elapsed_ms rejects_file ambiguous_file ambiguous_kept_file linked_file
  unlinked_file plan_file`.split(/\s+/);

/** The summary's fields as shown (-o json, the table): a link run's, a removal's or a meeting's own. */
export function linkSummaryRecord(s: LinkSummary): Record<string, unknown> {
  const own = s.remove
    ? ['removed', 'not_linked', 'unlinked_file']
    : s.association
      ? ['set', 'replaced', 'unchanged', 'linked_file']
      : ['linked', 'already_linked', 'linked_file'];
  const others = new Set(['linked', 'already_linked', 'removed', 'not_linked', 'set', 'replaced', 'unchanged']);
  for (const f of ['linked_file', 'unlinked_file']) others.add(f);
  const all = s as unknown as Record<string, unknown>;
  return Object.fromEntries(KEYS.filter((k) => own.includes(k) || !others.has(k)).map((k) => [k, all[k] ?? null]));
}

/**
 * A link run's summary: its table (or JSON, unless `inJson`: a records file's batch summary holds it), the command
 * that takes back what it made, and exit 9 (thrown) when a row was not linked.
 */
export async function printLinkSummary(
  ctx: Ctx,
  s: LinkSummary,
  /** `file`: the input's path as given, which the hint names */
  o: { inJson?: boolean; file?: string } = {},
): Promise<void> {
  const shown = linkSummaryRecord(s);
  const { output, quiet, stderrColor } = ctx.globals;
  const json = output === 'json' || output === 'ndjson';
  if (json && !o.inJson) await writeRecord(output, ctx.io.stdout, shown);
  if (!quiet && !json) await writeRecord('table', ctx.io.stderr, forPeople(shown), { color: stderrColor });
  const [parent, relation] = s.resource.split(' ') as [string, string];
  const cmd = (file: string, remove: boolean) =>
    crmCommand(ctx.globals, ['links', 'import', parent, relation, file, ...(remove ? ['--remove'] : [])]);
  // a job that made nothing (its one request answered 404: a record gone) has nothing to take back (the third trial)
  const made = s.linked + s.set + s.replaced + s.failed > 0;
  const back = [
    s.linked_file && made && `To remove the links this job made:\n  ${cmd(s.linked_file, true)}`,
    s.unlinked_file &&
      s.removed + s.failed > 0 &&
      `To link again what this job removed:\n  ${cmd(s.unlinked_file, false)}`,
    s.ambiguous_kept_file && keptText(s.ambiguous_file ?? '', s.ambiguous_kept_file),
  ].filter(Boolean);
  if (!quiet) ctx.io.stderr.write(forStderr(ctx.io.stderr, [doneSentence(s), ...back].join('\n')) + '\n');
  const bad = s.ambiguous + s.not_found + s.duplicate + s.invalid + s.failed;
  if (bad === 0) return;
  const parts = [
    [s.failed, `failed`],
    [s.not_found, 'not found'],
    [s.ambiguous, `ambiguous (in ${s.ambiguous_file ?? 'the ambiguous file'})`],
    [s.duplicate, 'duplicate'],
    [s.invalid, 'invalid'],
  ] as const;
  const what = parts.filter(([n]) => n > 0).map(([n, t]) => `${count(n)} ${t}`);
  // the trial fixed a row in the rejects file and ran the same command again, as the hint said: the rerun read the
  // input again, not the fix. The rejects file is what is imported once fixed; the same command is for what failed.
  const fixable = s.not_found + s.duplicate + s.invalid;
  // rows by id the server answered 404 (a delete's backup imported after a contact it linked was deleted): no key to
  // fix and nothing a rerun would change; the record, brought back, has another id
  const gone = fixable > 0 && (s.gone ?? 0) === fixable;
  const fix = !s.rejects_file
    ? ''
    : gone
      ? `the rows whose record the server did not find when linking (deleted since the input was written) are in ${s.rejects_file} ` +
        `with its reason: as they are they cannot be linked; once such a record is there again (under a new id), put that id in its row there, then import that file: ` +
        crmCommand(ctx.globals, ['links', 'import', parent, relation, s.rejects_file])
      : fixable > 0
        ? `the not-found, duplicate and invalid rows are in ${s.rejects_file} with their reasons: fix them there (a key a record has; ` +
          `a record that is missing, created), then import that file: ${crmCommand(ctx.globals, ['links', 'import', parent, relation, s.rejects_file])} ` +
          `(a row fixed only there stays not found in ${o.file ?? 'the input file'}: fix it there too)`
        : `the failed rows are in ${s.rejects_file} with their reasons`;
  // what to edit, and how (the trial: "name that record by its id" did not say where, and _candidates is not read)
  // and what a rerun of this file does with them: while two records share a key, its rows stay ambiguous (the trial
  // followed the hint, ran the same command again, and met them again)
  // the trial, in a records file's run: "this command" read as the batch just run, which would have written a field
  const ambiguousFile = s.ambiguous_file ?? 'the ambiguous file';
  const [idOf, otherIdOf] = [
    parentField(parent),
    findLink(parent, relation)?.childKey ?? findAssociation(parent, relation)?.bodyKey,
  ];
  const amb =
    s.ambiguous > 0
      ? `an ambiguous row's key names two or more records: in ${ambiguousFile}, add a column ${idOf} or ${otherIdOf} ` +
        `(the side its _side column says) holding the one of _candidates you mean (a row's id is used in place of its key), ` +
        `then: ${crmCommand(ctx.globals, ['links', 'import', parent, relation, ambiguousFile])} ; ` +
        `in ${o.file ?? 'the input file'} those rows stay ambiguous until named by id there too, or until the extra records are merged`
      : '';
  const again =
    s.failed > 0
      ? `the failed rows: run the same command again (what is linked by then needs no request)`
      : fixable > 0 && !gone
        ? `or, once the records they name are there, run the same command again`
        : '';
  throw new PartialFailureError(
    `${plural(bad, 'row')} of ${count(s.rows)} not linked (${s.resource}): ${what.join(', ')}`,
    {
      hint: [fix, amb, again].filter(Boolean).join('; '),
    },
  );
}

function doneSentence(s: LinkSummary): string {
  const rows = `${plural(s.rows, 'row')} (${s.resource} links)`;
  if (s.remove) return `Removed ${count(s.removed)} of ${rows}; ${count(s.not_linked)} not linked.`;
  if (s.association)
    return `Set ${count(s.set + s.replaced)} of ${rows} (${count(s.replaced)} replacing another); ${count(s.unchanged)} unchanged.`;
  const repeated = s.repeated > 0 ? `; ${count(s.repeated)} repeating an earlier row (skipped)` : '';
  return `Linked ${count(s.linked)} of ${rows}; ${count(s.already_linked)} already linked${repeated}.`;
}
