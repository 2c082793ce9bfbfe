// `crm batch RESOURCE FILE` (CONTRACT §7): runs the import engine (src/import/) with the HTTP
// client, shows progress on a terminal, prints the summary and picks the exit code (0 / 9 / 2 / 130).
import { join } from 'node:path';
import {
  DiskError,
  InterruptedError,
  PartialFailureError,
  RateLimitError,
  ServerError,
  restated,
} from '../../http/errors.js';
import { maskKey } from '../../http/mask.js';
import type { HttpClient } from '../../http/types.js';
import {
  httpSender,
  importExitCode,
  importSummaryOf,
  keyIdentity,
  deleteCostText,
  dropResults,
  matchReader,
  recreated,
  restoreResults,
  runImport,
  writeOwners,
  type ImportOptions,
  type ImportSummary,
  type RestoreResults,
  type RestoreRun,
  type RowOperation,
} from '../../import/index.js';
import { detectFormat } from '../../import/input/reader.js';
import { matchFields, printMatchSummary } from './reconcile.js';
import { linkColumnsOf, linkThenPrint, printWithLinks, recordLinksOf, relinkBackup } from './record-links.js';
import type { RecordLinks } from '../../import/link-keys/record-links.js';
import { printDryPlan, printPlan, showPlan } from './plan-text.js';
import { SendingRate } from '../../output/eta.js';
import { count, plural, wasWere } from '../../output/plural.js';
import { costAtLimitText } from '../../output/eta.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { forStderr } from '../../output/width.js';
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { crmCommand, shellWord } from '../shared/command-line.js';
import type { BatchOptions } from './command.js';
import { backupPath, batchOperation, checkResourceName, confirmPlan } from './operation.js';
import { deleteBackup, noteRecreated } from './delete-backup.js';
import { knownFields } from './known-fields.js';
import { once } from '../../util/once.js';
import { liveProgress } from './live-progress.js';
import { outcomeSentence, reasonLines, type Stopped } from './outcome.js';
import { forPeople, progressText } from './progress-text.js';
import { capHeap } from '../shared/heap.js';

export async function runBatch(given: BatchOptions, ctx: Ctx): Promise<void> {
  capHeap();
  // records and their links in one file: the batch leaves the link columns out, the links run takes them after it
  const { o, groups } = await recordLinksOf(given);
  if (!o.operation) checkResourceName(o.resource, o.update ? 'update' : o.delete ? 'delete' : undefined);
  const journalDir = join(ctx.configDir(), 'imports');
  // a plain create: its rows' owner_id, left out, goes to the owners file (restoreResults, writeOwners)
  const restoring: RestoreRun = {
    ...{ file: o.file, resource: o.resource, results: o.results },
    ...{ format: o.inputFormat, encoding: o.encoding, maps: o.map },
    creates: !o.operation && !o.update && !o.delete && !o.match && !o.dryRun,
    ...{ tmpDir: journalDir, signal: ctx.signal },
  };
  const restore = await restoreResults(restoring);
  const { client, opts } = await importTarget({ ...o, results: restore.path }, ctx);
  const sending = new SendingRate();
  const progress = liveProgress(ctx, (p) => progressText(p, { pace: client?.pace?.(), now: ctx.clock.now(), sending }));
  const op = opts.operation;
  const kept: string[] = [];
  const backup = deleteBackup(ctx, o, op, client, progress);
  const fields = fieldsOf(client, o, op, ctx);
  // a delete's backup goes into its journal: a rerun adds to (and names) the file the job began
  const summary = await runImport(backup.path ? { ...opts, backupPath: backup.path } : opts, {
    // a dry run sends nothing
    send: httpSender(client, op, { onKept: (w) => kept.push(w), backup: backup.current }),
    readIndex: client && opts.match ? matchReader(client, opts.resource, ctx.clock, ctx.signal) : undefined,
    // a dry run's plan is its output (printDryPlan): not shown before as well
    // …and a big one asks first on a terminal (confirmPlan), with the progress line off
    onPlan:
      client && opts.match && !o.dryRun
        ? async (plan) => {
            showPlan(ctx, client, o.concurrency)(plan);
            await progress.pause(() =>
              confirmPlan(
                ctx,
                o,
                plan,
                groups.map((g) => g.other),
              ),
            );
          }
        : undefined,
    knownFields: fields.read,
    // the question is asked with the progress line off, so it does not draw over it
    beforeSend: op?.kind === 'delete' ? backup.beforeSend : undefined,
    journalDir,
    clock: ctx.clock,
    signal: ctx.signal,
    stdin: ctx.io.stdin as NodeJS.ReadableStream as import('node:stream').Readable,
    stats: client ? () => ({ ...client.stats }) : undefined,
    warn: (m) => ctx.warn(m),
    onProgress: (p) => progress.update(p),
  })
    .finally(async () => {
      await progress.stop();
      await backup.close();
      warnKept(ctx, kept);
    })
    .catch(async (err: unknown) => {
      // crm's own results file of a stopped run: the rerun that finishes the job writes it again, from its journal
      await dropResults(restore).catch(() => undefined);
      const found = importSummaryOf(err);
      const partial = found && backup.named(found);
      const stopped = err instanceof InterruptedError ? 'interrupted' : 'stopped';
      if (partial)
        await (partial.reconcile ? printMatchSummary(ctx, partial, stopped) : printSummary(ctx, partial, stopped));
      throw withResumeHint(err, o, partial);
    });
  if (summary.reconcile) return printReconciled(ctx, o, groups, client, summary);
  if (summary.plan) {
    await printPlan(ctx, summary, fields.wasRead(), dryCost(o, summary, ctx, client));
    if (summary.refused) throw summary.refused;
    return;
  }
  return printCreated(ctx, o, client, backup.named(summary), { run: restoring, results: restore });
}

/**
 * A create's (or update's, delete's, link's) summary: a plain create's owners file, and a delete's backup's links made
 * again (record-links.ts), both from its results; then the exit: Ctrl-C while linking (130), rows not done (9), links
 * not made (9).
 */
async function printCreated(
  ctx: Ctx,
  o: BatchOptions,
  client: HttpClient | undefined,
  summary: ImportSummary,
  restore: { run: RestoreRun; results: RestoreResults },
): Promise<void> {
  const { owners, relinked } = await Promise.resolve()
    .then(async () => ({
      owners: await writeOwners(restore.run, restore.results),
      relinked:
        restore.results.links && client
          ? await relinkBackup(ctx, o, client, restore.results.path!, summary.created)
          : { links: [], stopped: undefined },
    }))
    .finally(() => dropResults(restore.results));
  const shown = recreated(o.file, summary, owners, restore.results.links);
  const print = (extra: Record<string, unknown>) => printSummary(ctx, shown, undefined, extra);
  const linksRefused = await printWithLinks(ctx, relinked.links, client?.pace?.(), print).catch((err: unknown) => err);
  noteRecreated(ctx, o, shown);
  if (summary.rows === 0)
    ctx.warn(`${o.file === '-' ? 'standard input' : o.file}: no rows (only a header); nothing was sent`);
  if (relinked.stopped) throw relinked.stopped;
  if (importExitCode(summary) === 9) throw partialFailure(o, ctx, summary);
  if (linksRefused) throw linksRefused as Error;
}

/** A `--match` run's plan (a dry run) or summary, with its records' links, planned or made (record-links.ts). */
function printReconciled(
  ctx: Ctx,
  o: BatchOptions,
  groups: RecordLinks[],
  client: HttpClient | undefined,
  summary: ImportSummary,
): Promise<void> {
  const print = (extra: Record<string, unknown>) =>
    o.dryRun
      ? printDryPlan(ctx, summary, client, o.concurrency, extra, linkColumnsOf(groups))
      : printMatchSummary(ctx, summary, undefined, extra);
  // a dry run's links: only the rows its batch would create count as new records
  const { createLines, createdIds } = summary.reconcile!;
  return linkThenPrint(ctx, o, groups, client, print, { creates: createLines, createdIds });
}

/** Exit 9: what failed, and the commands that go on (this same command; the fixed rejects file's import). */
function partialFailure(o: BatchOptions, ctx: Ctx, summary: ImportSummary): PartialFailureError {
  // the rejects file keeps the input's columns: its command keeps the job's --map (issue 29's re-trial: without
  // them, pasted, it was refused on the columns the maps had named)
  const maps = (o.map ?? []).flatMap((m) => ['--map', m]);
  const importFile = (file: string): string =>
    summary.operation ? resumeCommand(o, file) : crmCommand(ctx.globals, ['batch', summary.resource, file, ...maps]);
  return new PartialFailureError(failureLine(summary), {
    hint: nextSteps(summary, o.file === '-', { rerun: resumeCommand(o), importFile }),
  });
}

/**
 * A dry run's cost, as the run's own notice says it (issue 29's re-trial: a delete's dry run said 80 requests where
 * the run, reading each record into its backup first, said 160, and none said a time): the requests and the least
 * time the rate limit allows them.
 */
function dryCost(o: BatchOptions, s: ImportSummary, ctx: Ctx, client: HttpClient | undefined): string {
  const plan = s.plan!;
  const atLimit = (n: number) => costAtLimitText(n, ctx.clock.now(), client?.pace?.());
  const rows = plan.valid;
  if (s.operation?.kind === 'delete' && o.backup !== false && o.file !== '-' && !o.operation) {
    const cost = deleteCostText({ toRead: rows, kept: 0, deletes: rows, rows }, atLimit);
    return `It would cost ${cost}; each record is first copied to ${backupPath(o)}.`;
  }
  return `It would cost ${plural(plan.chunks, 'request')}: ${atLimit(plan.chunks)}.`;
}

/** The client (none for a dry run, which needs no key: only the base URL, which names the journal) and the engine's options. */
async function importTarget(o: BatchOptions, ctx: Ctx): Promise<{ client?: HttpClient; opts: ImportOptions }> {
  const profile = await ctx.profile();
  // a dry run sends nothing; --match reads what the CRM holds even then, and any other reads the page of records
  // its cells are typed by, as the run will (knownFields) — when a key is there to read it with: else it plans offline
  const match = matchFields(o);
  const client =
    o.dryRun && !match
      ? await ctx.client({ concurrencyFlag: true }).catch(() => undefined)
      : await ctx.client({ concurrencyFlag: true });
  const baseUrl = client ? client.baseUrl : (profile.baseUrl ?? '');
  // the journal tells keys apart (another key is another import) by a hash, never the key itself,
  // and names it, in a refusal, masked (a key of no known form masks to `****`: nothing to name)
  const keyId = keyIdentity(profile.apiKey);
  const keyMask = profile.apiKey && maskKey(profile.apiKey) !== '****' ? maskKey(profile.apiKey) : undefined;
  const { operation, maps } = o.operation ? { operation: o.operation, maps: o.map } : batchOperation(o);
  const opts: ImportOptions = {
    ...{ resource: o.resource, operation, input: o.file, baseUrl, keyId, keyMask, maps, chunkSize: o.chunkSize },
    ...{ concurrency: o.concurrency, rejectsPath: o.rejects, resultsPath: o.results, dryRun: o.dryRun },
    ...{ strict: o.strict, resume: o.resume, encoding: o.encoding, format: o.inputFormat },
    ...(match ? { match: { fields: match }, planPath: o.plan } : {}),
  };
  return { client, opts };
}

/**
 * The fields the CRM's records have (one page, read lazily, once): a header naming one as written is that field; a
 * create's or update's columns are checked against them, and its text cells typed by them. A dry run whose read
 * failed plans as if offline (it sends nothing either way), and says whether it read them (wasRead).
 */
function fieldsOf(client: HttpClient | undefined, o: BatchOptions, op: RowOperation | undefined, ctx: Ctx) {
  let read = false;
  const offline = (err: unknown): undefined => {
    if (o.dryRun && !(err instanceof InterruptedError)) return undefined;
    throw err;
  };
  return {
    read:
      client && (!op || op.kind === 'update')
        ? once(() => knownFields(client, o.resource, ctx.signal).then((k) => ((read = true), k), offline))
        : undefined,
    wasRead: () => read,
  };
}

/** Links that were there already with another type: the API keeps a link as it is (spec: relinking is a no-op). */
function warnKept(ctx: Ctx, kept: string[]): void {
  if (kept.length === 0) return;
  const shown = kept.slice(0, 3).map((k) => `  ${sanitizeForTerminal(k)}`);
  ctx.warn(
    `${plural(kept.length, 'link was', 'links were')} already there with other fields, kept as they were ` +
      `(linking again changes nothing; remove the link and add it again to change it):\n${shown.join('\n')}${kept.length > 3 ? '\n  …' : ''}`,
  );
}

/** A run that stopped with rows left (Ctrl-C, a full disk, the network, the server or the rate limit): its error says the command that resumes it. */
function withResumeHint(err: unknown, o: BatchOptions, partial: ImportSummary | undefined): unknown {
  if (err instanceof InterruptedError && !err.hint)
    return new InterruptedError(err.message, { hint: resumeHint(o), cause: err });
  if (err instanceof DiskError) {
    const elsewhere = 'or write elsewhere: --rejects, --results, CRM_CONFIG_DIR for the journal';
    const hint = `free some space (${elsewhere}), then ${resumeHint(o)}`;
    return new DiskError(err.message, { code: err.code, cause: err, hint });
  }
  const left = partial !== undefined && partial.not_sent + partial.in_doubt > 0;
  if (left && (err instanceof ServerError || err instanceof RateLimitError))
    return restated(err, { hint: `${err.hint ? `${err.hint}\n` : ''}once that is mended, ${resumeHint(o)}` });
  return err;
}

/**
 * The command that resumes an interrupted import: the one typed, as shell words to paste, without
 * --no-resume (which would ignore the journal this run kept). Standard input cannot be replayed by
 * a command line alone: the same content has to be piped again.
 */
function resumeHint(o: Pick<BatchOptions, 'argv' | 'file' | 'resource'>): string {
  const line = resumeCommand(o);
  return o.file === '-' ? `to resume, pipe the same content again to: ${line}` : `to resume, run: ${line}`;
}

/**
 * The command as typed (its --profile and --base-url included), without --no-resume; `on`: an update, delete or
 * link run again on another file (a fixed rejects file), with that file, without the outputs' flags.
 */
function resumeCommand(o: Pick<BatchOptions, 'argv' | 'file' | 'resource'>, on?: string): string {
  const words = [...(o.argv ?? ['batch', o.resource, o.file])];
  const at = words.lastIndexOf(o.file);
  if (on !== undefined && at >= 0) words[at] = on;
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    // on another file (a rejects file: UTF-8, crm's own): not this run's outputs, nor the input's encoding
    const output = on !== undefined && /^--(rejects|results|encoding)(=|$)/.test(w);
    if (w === '--no-resume' || (output && w.includes('='))) continue;
    if (output) i++;
    else out.push(w);
  }
  return ['crm', ...out].map(shellWord).join(' ');
}

/** The commands the next steps print (this same command; the one importing a fixed rejects file); by default without this run's flags. */
type NextCommands = { rerun?: string; importFile?: (file: string) => string };

/**
 * What to do about the rows not created, each step leading to every row created exactly once: rows
 * in doubt are settled only by this same command (same keys, journal), so while any remain that is
 * the only step (a rerun rewrites the rejects file); then the rejects, then rows to check first.
 */
export function nextSteps(s: ImportSummary, stdin: boolean, cmd: NextCommands = {}): string {
  const created = s.operation?.done ?? 'created';
  if (s.in_doubt > 0) {
    const again = stdin
      ? 'pipe the same content to this same command'
      : 'rerun this same command (same file, same options)';
    const them = s.in_doubt === 1 ? 'it' : 'them';
    return (
      `${plural(s.in_doubt, 'row')} ${wasWere(s.in_doubt)} sent without an answer and may have been ${created}: first ${again}; ` +
      `it settles ${them} under the same Idempotency-Keys (never import ${them} any other way) and then says what is left to fix.` +
      (cmd.rerun ? `\n  ${cmd.rerun}` : '')
    );
  }
  const rejected = s.failed + s.invalid - s.in_doubt - s.unknown;
  // a DELETE answered 404 (not a retry's: that one counts as deleted): the record is not there; sent again it fails the same way
  const gone =
    s.operation?.kind === 'delete'
      ? s.reasons.filter((r) => r.code === 'NOT_FOUND').reduce((sum, r) => sum + r.count, 0)
      : 0;
  const file = s.rejects_file ?? 'the rejects file';
  const it = gone === 1 ? 'it' : 'them';
  const fix = rejected - gone;
  const steps = [
    gone > 0 &&
      `${plural(gone, 'row')} ${wasWere(gone)} not found (404): already deleted, or never there; running ${it} again fails the same way, ` +
        `so there is nothing to do for ${it}${rejected > gone ? ` (leave ${it} out of ${file})` : ''}.`,
    fix > 0 &&
      `${plural(fix, 'row')} ${wasWere(fix)} not ${created} and ${fix === 1 ? 'is' : 'are'} in ${file}: fix ${fix === 1 ? 'it' : 'them'} there and run \`${cmd.importFile?.(file) ?? crmCommand({}, ['batch', s.resource, file])}\`.`,
    s.unknown > 0 &&
      `The server's answer did not say whether ${plural(s.unknown, 'row')} ${wasWere(s.unknown)} ${created}: ${s.unknown === 1 ? 'it is' : 'they are'} in ${s.unknown_file ?? 'the unknown file'}; ` +
        'check in the CRM which exist before importing any of them.',
  ];
  return steps.filter(Boolean).join('\n');
}

/** The exit-9 error line; rows in doubt are named as such, not as failed. */
function failureLine(s: ImportSummary): string {
  const failed = s.failed - s.in_doubt;
  if (s.in_doubt === 0) {
    const what = [
      failed > 0 ? `${plural(failed, 'row')} failed` : '',
      s.invalid > 0 ? `${plural(s.invalid, 'row')} ${wasWere(s.invalid)} invalid` : '',
    ].filter(Boolean);
    return `${what.join(' and ')}, of ${count(s.rows)}`;
  }
  const parts = [`${plural(s.in_doubt, 'row')} sent without an answer (rerun to settle)`];
  if (failed > 0) parts.push(`${count(failed)} failed`);
  if (s.invalid > 0) parts.push(`${count(s.invalid)} invalid`);
  return `${parts.join(', ')}, of ${count(s.rows)}`;
}

const SUMMARY_KEYS =
  `resource rows created failed invalid skipped chunks requests retries elapsed_ms rejects_file in_doubt
  unknown unknown_file not_sent backup_file links_not_restored owners_file`.split(/\s+/) as Array<keyof ImportSummary>;

/** The summary (a table on stderr, or JSON on stdout with `reasons`), then why rows failed and one sentence of what happened. */
async function printSummary(
  ctx: Ctx,
  s: ImportSummary,
  stopped?: Stopped,
  /** a backup's links made again: their summaries (record-links.ts) */
  extra: Record<string, unknown> = {},
): Promise<void> {
  const op = s.operation;
  const { output, quiet, stderrColor } = ctx.globals;
  const json = output === 'json' || output === 'ndjson';
  const record: Record<string, unknown> = {};
  for (const k of SUMMARY_KEYS) {
    const absent = (k === 'backup_file' || k === 'owners_file') && s[k] === undefined;
    if ((op && k === 'chunks') || absent || (k === 'links_not_restored' && (!json || !s[k]))) continue;
    // an update, delete or link says what it did (`updated`), and has no chunks
    if (k === 'created' && op) Object.assign(record, { operation: op.kind, [op.done]: s.created });
    else record[k] = s[k];
  }
  if (json) await writeRecord(output, ctx.io.stdout, { ...record, reasons: s.reasons, ...extra });
  if (quiet) return;
  if (!json) await writeRecord('table', ctx.io.stderr, forPeople(record), { color: stderrColor });
  const why = json
    ? []
    : reasonLines(s.reasons, ctx.io.stderr.isTTY ? ctx.io.stderr.columns : undefined, s.rejects_file);
  // a backup named otherwise (`--backup kept.bak`) is imported as what it is: NDJSON
  const ndjson = s.backup_file && detectFormat(s.backup_file) !== 'ndjson' ? ['--input-format', 'ndjson'] : [];
  const restore = s.backup_file && crmCommand(ctx.globals, ['batch', s.resource, s.backup_file, ...ndjson]);
  ctx.io.stderr.write([...why, forStderr(ctx.io.stderr, outcomeSentence(s, stopped, restore))].join('\n') + '\n');
}
