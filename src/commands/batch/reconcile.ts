// `crm batch RESOURCE FILE --match FIELD[,FIELD]` (CONTRACT §7b): the options, the read of what the CRM holds
// (with progress), the plan as shown before the run, and the summary.
import { PartialFailureError, UsageError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import type { ImportDeps, ImportSummary, MatchPlan } from '../../import/index.js';
import { chooseRead, readByIds, readIndex } from '../../import/match/read.js';
import { limitFloorMs } from '../../output/eta.js';
import { count, plural } from '../../output/plural.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { writeRecord } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import type { BatchOptions } from './command.js';

/** `--match a,b` → its fields; refused with --update or --delete (reconcile decides per row), and --plan without it. */
export function matchFields(o: Pick<BatchOptions, 'match' | 'plan' | 'update' | 'delete' | 'idColumn'>): string[] | undefined {
  const help = { hint: 'see `crm batch --help`' };
  if (o.match === undefined) {
    if (o.plan !== undefined) throw new UsageError('--plan applies only with --match (the plan of a reconcile)', help);
    return undefined;
  }
  if (o.update || o.delete) {
    throw new UsageError(
      `--match cannot be used with --${o.update ? 'update' : 'delete'}: --match decides per row whether to create or update`,
      help,
    );
  }
  if (o.idColumn !== undefined) throw new UsageError('--id-column applies only with --update or --delete (--match id matches on ids)', help);
  const fields = o.match.split(',').map((f) => f.trim());
  if (fields.some((f) => f === ''))
    throw new UsageError(`--match "${o.match}": name one or more fields, separated by commas (--match email)`, help);
  return [...new Set(fields)];
}

/** The engine's read: the collection listed at the largest page size, with a progress line on a terminal. */
export function matchRead(ctx: Ctx, client: HttpClient, resource: string): NonNullable<ImportDeps['readIndex']> {
  return async (req) => {
    const tty = ctx.io.stderr.isTTY === true && !ctx.globals.quiet;
    const onProgress = (p: { records: number; requests: number }): void => {
      if (tty) ctx.io.stderr.write(`\r\x1b[2Kreading ${resource}: ${count(p.records)} records, ${plural(p.requests, 'request')}`);
    };
    const how = chooseRead(req.fields, req.keys);
    const base = { client, resource, keep: req.keep, signal: ctx.signal, onProgress, dir: req.dir };
    const index = how.how === 'get' && req.ids ? await readByIds({ ...base, ids: req.ids }) : await readIndex({ ...base, ...req });
    if (tty) ctx.io.stderr.write('\r\x1b[2K');
    return { ...index, why: how.why };
  };
}

/** The least time the rate limit allows the plan's requests, as the pacer knows it after the read. */
function leastMs(plan: MatchPlan, client: HttpClient | undefined, now: number): number | undefined {
  return limitFloorMs(plan.requests, now, client?.pace?.());
}

const duration = (ms: number): string =>
  ms < 1000 ? 'under a second' : ms < 120_000 ? `${Math.ceil(ms / 1000)} s` : `${Math.ceil(ms / 60_000)} min`;

/** The plan: counts per action, the fields that change, the requests and the least time they take. */
export function planLines(plan: MatchPlan, least: number | undefined): string[] {
  const changes = Object.entries(plan.changes)
    .sort(([, a], [, b]) => b - a)
    .map(([f, n]) => `${sanitizeForTerminal(f)} ${count(n)}`);
  const row = (label: string, n: number, more = ''): string => `  ${label.padEnd(10)} ${count(n).padStart(9)}${more ? `  ${more}` : ''}`;
  const time = least === undefined ? '' : `, at least ${duration(least)} at the key's rate limit`;
  return [
    `Plan for ${count(plan.rows)} rows of ${plan.resource}; read: ${plan.read}`,
    row('create', plan.create),
    row('update', plan.update, changes.join(', ')),
    row('unchanged', plan.unchanged, plan.unchanged > 0 ? 'no request' : ''),
    row('ambiguous', plan.ambiguous, plan.ambiguous > 0 ? 'two or more records have the key: not sent' : ''),
    row('duplicate', plan.duplicate, plan.duplicate > 0 ? 'an earlier row has the key: not sent' : ''),
    row('invalid', plan.invalid),
    `  requests: ${count(plan.requests)}${time}`,
  ];
}

/** Before the run, on a terminal (stderr); a dry run prints it as its output. */
export function showPlan(ctx: Ctx, client: HttpClient | undefined): (plan: MatchPlan) => void {
  return (plan) => {
    if (plan.resumed !== undefined || ctx.globals.quiet || ctx.io.stderr.isTTY !== true) return;
    ctx.io.stderr.write(`${planLines(plan, leastMs(plan, client, ctx.clock.now())).join('\n')}\n`);
  };
}

export async function printDryPlan(ctx: Ctx, s: ImportSummary, client: HttpClient | undefined): Promise<void> {
  const plan = s.reconcile!.plan;
  const least = leastMs(plan, client, ctx.clock.now());
  const format = ctx.format();
  if (format !== 'table') {
    const { mapping: _m, resumed: _r, ...fields } = plan;
    return writeRecord(format === 'ndjson' ? 'ndjson' : 'json', ctx.io.stdout, { ...fields, least_ms: least ?? null, dry_run: true });
  }
  const planned = s.reconcile!.plan_file ? [`Every row's action: ${s.reconcile!.plan_file}`] : [];
  ctx.io.stdout.write(`Dry run: nothing was sent.\n${planLines(plan, least).join('\n')}\n${planned.join('\n')}${planned.length ? '\n' : ''}`);
}

const KEYS = `resource rows created updated unchanged ambiguous duplicate invalid failed requests read_requests elapsed_ms
  rejects_file ambiguous_file undo_file created_file`.split(/\s+/);

/** The summary (CONTRACT §7b): a table on stderr, or JSON on stdout; exit 9 when a row was not made to agree. */
export async function printMatchSummary(ctx: Ctx, s: ImportSummary): Promise<void> {
  const r = s.reconcile!;
  const all: Record<string, unknown> = { ...s, ...r, read_requests: r.plan.read_requests, requests: s.requests + r.plan.read_requests };
  const record = Object.fromEntries(KEYS.map((k) => [k, all[k] ?? null]));
  if (s.skipped > 0) record.skipped = s.skipped;
  if (s.not_sent > 0) record.not_sent = s.not_sent;
  const { output, quiet, stderrColor } = ctx.globals;
  const json = output === 'json' || output === 'ndjson';
  if (json) await writeRecord(output, ctx.io.stdout, { ...record, reasons: s.reasons });
  if (!quiet && !json) await writeRecord('table', ctx.io.stderr, record, { color: stderrColor });
  const notAgreeing = s.failed + s.invalid + r.ambiguous + r.duplicate;
  if (!quiet) ctx.io.stderr.write(`${sentence(s)}\n`);
  if (notAgreeing === 0) return;
  const where = [s.rejects_file && `rejects: ${s.rejects_file}`, r.ambiguous_file && `ambiguous: ${r.ambiguous_file}`]
    .filter(Boolean)
    .join('; ');
  throw new PartialFailureError(`${plural(notAgreeing, 'row')} of ${count(s.rows)} not made to agree (${where})`, {
    hint: 'fix those rows in the file (or the CRM) and run the same command again: rows that agree by then need no request',
  });
}

function sentence(s: ImportSummary): string {
  const r = s.reconcile!;
  const parts = [`created ${count(s.created)}`, `updated ${count(r.updated)}`, `${count(r.unchanged)} unchanged`];
  const back = [
    r.undo_file && `undo with: crm batch ${s.resource} ${r.undo_file} --update`,
    r.created_file && `created ids in ${r.created_file}`,
  ];
  return `${s.resource}: ${parts.join(', ')}.${back.some(Boolean) ? ` ${back.filter(Boolean).join('; ')}.` : ''}`;
}
