// `crm batch RESOURCE FILE --match FIELD[,FIELD]` (CONTRACT §7b): the options and the summary (the read of what
// the CRM holds is the engine's: src/import/match/read.ts, `matchReader`).
import { resolve } from 'node:path';
import { PartialFailureError, UsageError } from '../../http/errors.js';
import { normalizeFieldName, type ImportSummary } from '../../import/index.js';
import { count, plural } from '../../output/plural.js';
import { forPeople } from './progress-text.js';
import { writeRecord } from '../../output/writers.js';
import { forStderr } from '../../output/width.js';
import type { Ctx } from '../context.js';
import type { BatchOptions } from './command.js';
import { crmCommand } from '../shared/command-line.js';
import { reasonLines, type Stopped } from './outcome.js';

/** `--match a,b` → its fields; refused with --update or --delete (reconcile decides per row), and --plan without it. */
export function matchFields(
  o: Pick<BatchOptions, 'match' | 'plan' | 'update' | 'delete' | 'idColumn' | 'file' | 'rejects'>,
): string[] | undefined {
  const help = { hint: 'see `crm batch --help`' };
  if (o.match === undefined) {
    if (o.plan !== undefined) throw new UsageError('--plan applies only with --match (the plan of a reconcile)', help);
    return undefined;
  }
  if (o.update || o.delete)
    throw new UsageError(
      `--match cannot be used with --${o.update ? 'update' : 'delete'}: --match decides per row whether to create or update`,
      help,
    );
  if (o.idColumn !== undefined)
    throw new UsageError('--id-column applies only with --update or --delete (--match id matches on ids)', help);
  // the plan file never replaces the input or one of the files the run writes
  const ours = [o.file, o.rejects, ...['undo', 'created', 'ambiguous', 'rejects'].map((x) => `${o.file}.${x}.csv`)];
  if (o.plan !== undefined && o.file !== '-' && ours.some((f) => f !== undefined && resolve(f) === resolve(o.plan!)))
    throw new UsageError(`--plan ${o.plan} names the input or a file this run writes: choose another file`, help);
  const fields = o.match.split(',').map((f) => f.trim());
  if (fields.some((f) => f === ''))
    throw new UsageError(`--match "${o.match}": name one or more fields, separated by commas (--match email)`, help);
  // spelled as headers are read (`Email` → email, `First Name` → first_name)
  return [...new Set(fields.map((f) => normalizeFieldName(f)))];
}

const KEYS =
  `resource rows created updated unchanged ambiguous duplicate invalid failed requests read_requests elapsed_ms
  rejects_file ambiguous_file undo_file created_file`.split(/\s+/);

/** The summary (CONTRACT §7b): a table on stderr, or JSON on stdout; exit 9 when a row was not made to agree. */
export async function printMatchSummary(
  ctx: Ctx,
  s: ImportSummary,
  stopped?: Stopped,
  /** a records file's links: their summaries */
  extra: Record<string, unknown> = {},
): Promise<void> {
  const r = s.reconcile!;
  const { read_requests } = r.plan;
  const all: Record<string, unknown> = { ...s, ...r, read_requests, requests: s.requests + read_requests };
  const record = Object.fromEntries(KEYS.map((k) => [k, all[k] ?? null]));
  if (s.skipped > 0) record.skipped = s.skipped;
  if (s.not_sent > 0) record.not_sent = s.not_sent;
  const { output, quiet, stderrColor } = ctx.globals;
  const json = output === 'json' || output === 'ndjson';
  if (json) await writeRecord(output, ctx.io.stdout, { ...record, reasons: s.reasons, ...extra });
  if (!quiet && !json) await writeRecord('table', ctx.io.stderr, forPeople(record), { color: stderrColor });
  const notAgreeing = s.failed + s.invalid + r.ambiguous + r.duplicate;
  // why rows failed, as a plain import says it (the server's reasons, grouped)
  const why = json
    ? []
    : reasonLines(s.reasons, ctx.io.stderr.isTTY ? ctx.io.stderr.columns : undefined, s.rejects_file);
  if (!quiet)
    ctx.io.stderr.write([...why, forStderr(ctx.io.stderr, sentence(s, ctx.globals, stopped))].join('\n') + '\n');
  // a stopped run: its error says what stopped it (and how to resume)
  if (notAgreeing === 0 || stopped) return;
  const failed = s.failed - s.in_doubt;
  const parts = [
    [s.in_doubt, `sent without an answer`],
    [failed, `failed${s.rejects_file ? ` (in ${s.rejects_file})` : ''}`],
    [r.ambiguous, `ambiguous (in ${r.ambiguous_file ?? 'the ambiguous file'})`],
    [r.duplicate + s.invalid, `duplicate or invalid${s.rejects_file ? ` (in ${s.rejects_file})` : ''}`],
  ] as const;
  const what = parts.filter(([n]) => n > 0).map(([n, text]) => `${count(n)} ${text}`);
  // what to do about each kind: a row of the file to fix; a key two records have, which no edit of the row settles
  const ways = [
    failed + r.duplicate + s.invalid > 0 ? 'fix the failed, duplicate or invalid rows in the file' : '',
    r.ambiguous > 0
      ? `each ambiguous row's key names two or more records (their ids: the _candidates column of ${r.ambiguous_file ?? 'the ambiguous file'}): ` +
        "merge or delete the extra records in the CRM, then run the same command again; or send those rows by their record's id " +
        '(an id column, --match id: by their key they stay ambiguous while two records share it)'
      : '',
  ].filter(Boolean);
  const hint =
    s.in_doubt > 0
      ? 'rerun this same command first: it finishes this plan under the same Idempotency-Keys (never send those rows another way)'
      : r.ambiguous > 0 && ways.length === 1
        ? ways[0]!
        : `${ways.join('; ')}; then run the same command again: rows that agree by then need no request`;
  const line = `${plural(notAgreeing, 'row')} of ${count(s.rows)} not made to agree: ${what.join(', ')}`;
  throw new PartialFailureError(line, { hint });
}

function sentence(s: ImportSummary, globals: Ctx['globals'], stopped?: Stopped): string {
  const r = s.reconcile!;
  // rows repeating their key's first row exactly are among the skipped, as in a plain import (outcome.ts)
  const repeated = s.repeated ?? 0;
  const more = [
    [r.ambiguous, 'ambiguous'],
    [r.duplicate, 'duplicate'],
    [s.invalid, 'invalid'],
    [s.failed, 'failed'],
    [s.skipped - repeated, 'done by the interrupted run'],
    [repeated, 'skipped as repeating an earlier row'],
    [s.not_sent, 'not sent yet'],
  ] as const;
  const rest = more.filter(([n]) => n > 0).map(([n, what]) => `, ${count(n)} ${what}`);
  const head = stopped === 'interrupted' ? 'Interrupted: created' : stopped ? 'Stopped: created' : 'Created';
  const done = `${head} ${count(s.created)}, updated ${count(r.updated)}, ${count(r.unchanged)} unchanged${rest.join('')} (${plural(s.rows, 'row')} of ${s.resource}).`;
  // the commands as a shell reads them back (a path with spaces quoted), aimed where this run was (--profile: a
  // rehearsal's undo pasted without it put back values in the other CRM)
  const cmd = (file: string, ...flags: string[]): string => crmCommand(globals, ['batch', s.resource, file, ...flags]);
  // a resumed job's files hold what the interrupted run did too
  const who = r.plan.resumed === undefined ? 'this run' : 'this job (this run and what was interrupted before it)';
  const back = [
    // a reconcile by id (CONTRACT §7c): it PATCHes only what differs from the file, so it is right twice, a week later
    r.undo_file && `To put back the values ${who} changed:\n  ${cmd(r.undo_file, '--match', 'id')}`,
    r.created_file && `To remove the records ${who} created:\n  ${cmd(r.created_file, '--delete')}`,
  ].filter(Boolean);
  return [done, ...back].join('\n');
}
