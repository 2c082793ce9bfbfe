// Records and their links in one file (CONTRACT §7d): `crm batch deals deals.csv --match name` with `contacts.email`
// or `companies.domain` columns. The batch run leaves those columns out; once it has created or matched the rows'
// records, each relation's columns become a file of pairs by natural key (src/import/link-keys/record-links.ts), which
// the links run plans and sends exactly as `crm links import` does, its way back beside the input
// (`deals.csv.contacts.linked.csv`).
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { CrmError, InterruptedError, PartialFailureError, UsageError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { openInput } from '../../import/input/reader.js';
import { findResource } from '../../api/resources.js';
import { parseColumnMaps } from '../../import/input/header.js';
import {
  leaveOut,
  matchColumns,
  pairsFile,
  recordLinkColumns,
  type RecordLinks,
} from '../../import/link-keys/record-links.js';
import { runKeyedLinks, type KeyedLinkOptions, type LinkSummary } from '../../import/link-keys/run.js';
import { backupPairs } from '../../import/files/backup-links.js';
import { createdLines } from '../../import/files/owners.js';
import type { Ctx } from '../context.js';
import type { PaceInfo } from '../../http/pace-info.js';
import { linkPlanRecord, linkSummaryRecord, printDry, printLinkSummary, progressLine } from '../links/keyed.js';
import type { BatchOptions } from './command.js';
import { matchFields } from './reconcile.js';

/** The link columns of a `--match` run's file (none without --match, or for standard input), and the options that leave them out. */
export async function recordLinksOf(o: BatchOptions): Promise<{ o: BatchOptions; groups: RecordLinks[] }> {
  if (o.file === '-' || /\.(ndjson|jsonl|json)$/i.test(o.file) || o.inputFormat === 'ndjson' || o.delete || o.operation)
    return { o, groups: [] };
  // a named pipe (or any file not regular) is read once, by the engine: its header is not ours to take
  if (!(await stat(o.file).catch(() => undefined))?.isFile()) return { o, groups: [] };
  const reader = await openInput(o.file, { name: o.file, format: 'csv' }).catch(() => undefined);
  if (!reader) return { o, groups: [] }; // the engine names what is wrong with the file
  reader.close();
  const groups = recordLinkColumns(o.resource, reader.header ?? [], parseColumnMaps(o.map));
  if (groups.length === 0) return { o, groups };
  // without --match the columns were sent as fields named `contacts.email` on every record (the trial's second
  // trial: a junk field on the deal, and no link)
  if (o.match === undefined) throw linkColumnsWithoutMatch(o, groups);
  // the batch leaves each link column out: a --map naming it (`Company=companies.name`) is the links run's, not the batch's
  const linkColumns = new Set(groups.flatMap((g) => g.columns.map((c) => c.header.trim())));
  const own = (o.map ?? []).filter((m) => !linkColumns.has(m.slice(0, m.lastIndexOf('=')).trim()));
  return { o: { ...o, map: [...own, ...leaveOut(groups)] }, groups };
}

/** Link columns in a run without --match: refused before anything is read or sent (exit 2). */
function linkColumnsWithoutMatch(o: BatchOptions, groups: readonly RecordLinks[]): UsageError {
  const columns = groups.flatMap((g) => g.columns.map((c) => `"${c.header.trim()}" (${g.other}.${c.field})`));
  const fields = ({ contacts: 'email', companies: 'domain' } as Record<string, string>)[o.resource] ?? 'name';
  return new UsageError(
    `${o.file}: ${columns.join(', ')} ${columns.length === 1 ? 'names' : 'name'} linked records, which crm links only in a --match run; without it ${columns.length === 1 ? 'it' : 'they'} would be sent as ${o.resource} fields`,
    {
      hint: `add --match with the fields that identify a ${findResource(o.resource)?.singular ?? 'record'} (e.g. --match ${fields}): its rows are created or matched, then linked; or leave ${columns.length === 1 ? 'the column' : 'the columns'} out with --map "COLUMN="`,
    },
  );
}

/**
 * A `--match` run's links (none without link columns or a client), then its summary with theirs; Ctrl-C (or an error)
 * while linking: what was done is printed all the same, then the interruption (130) or error thrown, before any row
 * not linked (9).
 */
export async function linkThenPrint(
  ctx: Ctx,
  o: BatchOptions,
  groups: readonly RecordLinks[],
  client: HttpClient | undefined,
  printRecords: (extra: Record<string, unknown>) => Promise<void>,
  /** the records run's: a dry run's lines of the rows it would create, a run's ids of the records it created */
  made: { creates?: ReadonlySet<number>; createdIds?: readonly string[] } = {},
): Promise<void> {
  // a relation refused (a key field no record has) after the records were made: their summary is printed all the same
  const { links, stopped } =
    client && groups.length > 0
      ? await linkRecords(o, groups, matchFields(o)!, client, ctx, made).catch((err: unknown) => ({
          links: [],
          stopped: err as Error,
        }))
      : { links: [] };
  await printWithLinks(ctx, links, client?.pace?.(), printRecords).catch((err: unknown) => {
    if (!stopped) throw err;
  });
  if (stopped) throw stopped;
}

/** Each relation's links of the file's rows, planned (a dry run) or made, one summary per relation. */
export async function linkRecords(
  o: BatchOptions,
  groups: readonly RecordLinks[],
  fields: readonly string[],
  client: HttpClient,
  ctx: Ctx,
  made: { creates?: ReadonlySet<number>; createdIds?: readonly string[] } = {},
): Promise<{ links: LinkSummary[]; stopped?: InterruptedError }> {
  const { creates } = made;
  const fresh = new Set(made.createdIds ?? []);
  const maps = parseColumnMaps(o.map);
  const reader = await openInput(o.file, { name: o.file, format: 'csv', signal: ctx.signal });
  const header = reader.header ?? [];
  const at = matchColumns(header, maps, fields);
  if (at.some((i) => i < 0)) throw new UsageError(`${o.file}: the --match columns are needed to link its rows`);
  const rows: Array<{ line: number; cells: string[] }> = [];
  for await (const row of reader.rows) rows.push({ line: row.line, cells: row.cells ?? [] });
  const out: LinkSummary[] = [];
  for (const group of groups) {
    const text = [...pairsFile(group, o.resource, fields, at, rows)].join('');
    const summary = await linkPairs(ctx, o, client, {
      ...{ parent: group.parent, relation: group.relation, text, label: `${o.file}.${group.other}` },
      derived: {
        records: group.recordIs,
        ...(o.dryRun ? { pending: { side: group.recordIs, ...(creates ? { lines: creates } : {}) } } : {}),
        ...(group.recordIs === 'parent' && fresh.size > 0 ? { fresh } : {}),
      },
    });
    if (summary instanceof InterruptedError) return { links: out, stopped: summary };
    if (summary && summary.rows > 0) out.push(summary);
  }
  return { links: out };
}

/**
 * A delete's backup imported again (CONTRACT §10): each record created, its own links (`_links`, kept by the delete)
 * made again to the children still there — a file of pairs by id per relation (backupPairs, from the create's results:
 * each line's new id), sent as `crm links import` sends it, its way back beside the input
 * (`deals.deleted.ndjson.contacts.linked.csv`). A child deleted since is the links run's not found (its rejects file).
 */
export async function relinkBackup(
  ctx: Ctx,
  o: BatchOptions,
  client: HttpClient,
  resultsPath: string,
  /** the records this run created (not an earlier run of the job) */
  createdNow: number,
): Promise<{ links: LinkSummary[]; stopped?: InterruptedError }> {
  const created = await createdLines(resultsPath);
  const pairs = await backupPairs(o.file, o.resource, created);
  // every record created by this run: none has links yet, none is read (an earlier run's may have been linked since)
  const fresh = createdNow === created.size ? new Set(created.values()) : undefined;
  const out: LinkSummary[] = [];
  for (const p of pairs) {
    const label = `${o.file}.${p.relation}`;
    const summary = await linkPairs(ctx, o, client, {
      parent: o.resource,
      ...p,
      label,
      derived: { records: 'parent', ...(fresh ? { fresh } : {}) },
    });
    if (summary instanceof InterruptedError) return { links: out, stopped: summary };
    if (summary && summary.rows > 0) out.push(summary);
  }
  return { links: out };
}

/**
 * One relation's pairs (`text`, a CSV) planned and sent by the links engine, named `label`, its way back beside it;
 * Ctrl-C: an InterruptedError returned (not thrown), so the records' summary and the relations done are printed first.
 */
async function linkPairs(
  ctx: Ctx,
  o: BatchOptions,
  client: HttpClient,
  p: {
    parent: string;
    relation: string;
    text: string;
    label: string;
    derived: Omit<NonNullable<KeyedLinkOptions['derived']>, 'source' | 'label' | 'base'>;
  },
): Promise<LinkSummary | InterruptedError | undefined> {
  // the trial: a minute of link reads and writes showed nothing
  const progress = progressLine(ctx);
  return runKeyedLinks(
    {
      ...{ parent: p.parent, relation: p.relation, file: '-', remove: false, dryRun: o.dryRun === true },
      ...{ concurrency: o.concurrency ?? 4, baseUrl: client.baseUrl },
      derived: { ...p.derived, source: Readable.from([p.text]), label: p.label, base: p.label },
    },
    {
      client,
      journalDir: join(ctx.configDir(), 'imports'),
      cwd: process.cwd(),
      clock: ctx.clock,
      signal: ctx.signal,
      warn: (m) => ctx.warn(m),
      progress: (line) => progress.update(`${p.parent} ${p.relation}: ${line}`),
    },
  )
    .finally(() => progress.stop())
    .catch((err: unknown) => {
      if (!(err instanceof InterruptedError)) throw err;
      // Ctrl-C: the records' summary and each relation's done so far are still printed, with their ways back (the
      // trial saw only "Error: interrupted", and never the command removing the links already made)
      const what = `${p.parent} ${p.relation}`;
      const message = /^interrupted: /.test(err.message)
        ? err.message
        : `interrupted while linking ${what}: ${err.message}`;
      return new InterruptedError(message, {
        hint:
          err.hint ??
          'run the same command again to finish the job: the records made are not made again, and the links there are read as there',
      });
    });
}

/**
 * The records run's summary (`printRecords`: its table or JSON, which then holds each relation's under `links`), then
 * each relation's; exit 9 (the first refusal, thrown after all are printed) when a row was not made to agree or not linked.
 */
export async function printWithLinks(
  ctx: Ctx,
  links: readonly LinkSummary[],
  pace: PaceInfo | undefined,
  printRecords: (extra: Record<string, unknown>) => Promise<void>,
): Promise<void> {
  const dry = links.some((l) => l.dry_run);
  const extra = links.length === 0 ? {} : { links: links.map((l) => (dry ? linkPlanRecord(l) : linkSummaryRecord(l))) };
  const refusals: unknown[] = [];
  const held = (p: Promise<void>) => p.catch((err: unknown) => void refusals.push(err));
  await held(printRecords(extra));
  for (const l of links)
    await held(dry ? printDry(ctx, l, pace, { inJson: true }) : printLinkSummary(ctx, l, { inJson: true }));
  if (refusals.length <= 1) {
    if (refusals[0] !== undefined) throw refusals[0] as Error;
    return;
  }
  // one exit for all: each relation's (and the records') refusal named, none lost above the others' tables
  const said = refusals.map((e) => (e instanceof CrmError ? e : undefined));
  if (said.some((e) => !(e instanceof PartialFailureError))) throw refusals[0] as Error;
  const hints = [...new Set(said.flatMap((e) => (e!.hint ? [e!.hint] : [])))];
  throw new PartialFailureError(said.map((e) => e!.message).join('; '), { hint: hints.join('\n') });
}

/** Each link column of the file (as written, trimmed) and the resource it links the row's record to. */
export function linkColumnsOf(groups: readonly RecordLinks[]): Map<string, string> {
  return new Map(groups.flatMap((g) => g.columns.map((c): [string, string] => [c.header.trim(), g.other])));
}
