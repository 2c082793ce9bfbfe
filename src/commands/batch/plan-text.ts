// The plan before a run: `crm batch … --dry-run` (a create's chunks, an update's first requests, the columns' mapping)
// and reconcile's plan (`--match`: counts per action, the fields that change, the requests and the least time they take).
import type { HttpClient } from '../../http/types.js';
import type { ImportPlan, ImportSummary, MatchPlan } from '../../import/index.js';
import { leastAtLimit } from '../../output/eta.js';
import { count, plural } from '../../output/plural.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { writeRecord } from '../../output/writers.js';
import { forStderr, forTerminal } from '../../output/width.js';
import type { Ctx } from '../context.js';

/** A dry run's output: its record as JSON (-o json, ndjson), else its lines, wrapped on a terminal. */
async function printOut(ctx: Ctx, record: Record<string, unknown>, lines: string[]): Promise<void> {
  const format = ctx.format();
  if (format !== 'table') return writeRecord(format === 'ndjson' ? 'ndjson' : 'json', ctx.io.stdout, record);
  ctx.io.stdout.write(`${forTerminal(ctx.io.stdout, lines.join('\n'))}\n`);
}

/**
 * `read`: the CRM's page of records was read to type the text columns (a dry run with a key), as the run will;
 * `cost`: the requests and the least time the limit allows them, as the run's own notice says it (run.ts dryCost).
 */
export async function printPlan(ctx: Ctx, s: ImportSummary, read: boolean, cost?: string): Promise<void> {
  const plan = s.plan!;
  const op = s.operation;
  const skipped = plan.finished_chunks ? ` (${plan.finished_chunks} finished by an earlier run would be skipped)` : '';
  const requests = plan.first_requests ?? [];
  const lines = [
    `Dry run: nothing was sent.`,
    `${plural(plan.rows, 'row')}: ${count(plan.valid)} valid, ${count(plan.invalid)} invalid${plan.repeated ? `, ${count(plan.repeated)} repeating an earlier row (skipped)` : ''}`,
    op
      ? `would ${op.kind} ${count(plan.valid)} (${op.name}): ${plural(plan.chunks, op.kind === 'delete' ? 'DELETE' : 'request')}, ${plan.concurrency} in flight${skipped}`
      : `${plural(plan.chunks, 'chunk')} of up to ${plan.chunk_size}, ${plan.concurrency} in flight${skipped}`,
    ...(cost ? [cost] : []),
    // what only the server checks (an email's form, a required field) is not known before it answers
    ...(plan.valid > 0 ? ["Valid is crm's check; the server's own (an email's form, …) come with its answers."] : []),
    ...mappingLines(plan.mapping),
    ...typingLines(plan.mapping, op, read),
    ...(requests.length ? [`First requests:`, ...requests.map((r) => `  ${sanitizeForTerminal(r)}`)] : []),
    ...(plan.first_invalid.length
      ? ['First invalid rows:', ...plan.first_invalid.map((r) => `  line ${r.line}: ${sanitizeForTerminal(r.reason)}`)]
      : []),
  ];
  const head = { resource: s.resource, ...(op ? { operation: op.kind } : {}), dry_run: true };
  return printOut(ctx, { ...head, ...plan }, lines);
}

/**
 * A create's or update's text columns may be sent typed (columnTyping: by what the collection's records hold): said,
 * with whether this dry run read them (with a key it reads the page the run reads; without one it cannot know, and
 * `(string)` above and the first requests are not the last word).
 */
function typingLines(mapping: ImportPlan['mapping'], op: ImportSummary['operation'], read: boolean): string[] {
  if (op && op.kind !== 'update') return [];
  if (!mapping?.some((c) => !c.ignored && !c.read_only && c.type === 'string')) return [];
  return [
    'Text columns: a cell written as JSON writes a value (37, false, {...}) is sent',
    'as that value when the records hold its field as that kind, else as text',
    read
      ? '(00501 stays text); this plan read the page of records the run reads.'
      : '(00501 stays text); one page is read when it runs, which this plan could not.',
    ...(op ? ['With --update, such a cell of a field held as two kinds is not sent (invalid).'] : []),
  ];
}

/** The header-to-field mapping of the plan: `First Name  → first_name (string)`, columns left out saying why. */
function mappingLines(
  mapping: ImportPlan['mapping'],
  /** a records file's link columns: the links' run reads them (`contacts.email` → `links to contacts`) */
  links: ReadonlyMap<string, string> = new Map(),
): string[] {
  if (!mapping?.length) return [];
  const names = mapping.map((c) => sanitizeForTerminal(c.column));
  const width = Math.min(30, Math.max(...names.map((n) => n.length)));
  const lines = mapping.map((c, i) => {
    const link = links.get(c.column.trim());
    const what = c.read_only
      ? 'left out: the server sets it'
      : link !== undefined
        ? `→ links to ${sanitizeForTerminal(link)} (below)`
        : c.ignored
          ? c.column.startsWith('_')
            ? 'ignored'
            : 'left out by --map'
          : `→ ${sanitizeForTerminal(c.field ?? '')} (${c.type})`;
    return `  ${names[i]!.padEnd(width)}  ${what}`;
  });
  return ['Columns:', ...lines];
}

/** The least time the rate limit allows the plan's requests, as the pacer knows it after the read (leastAtLimit). */
const leastMs = (ctx: Ctx, plan: MatchPlan, client: HttpClient | undefined) =>
  leastAtLimit(plan.requests, ctx.clock.now(), client?.pace?.());

/** A least time in words, rounded down (`at least` it says: never more than the time the run takes). */
const duration = (ms: number): string => {
  const down = (x: number, unit: number, tenths = false) =>
    tenths ? Math.floor((x / unit) * 10) / 10 : Math.floor(x / unit);
  if (ms < 1000) return 'under a second';
  if (ms < 10_000) return `${down(ms, 1000, true)} s`;
  if (ms < 120_000) return `${down(ms, 1000)} s`;
  return `${down(ms, 60_000, ms < 600_000)} min`;
};

/**
 * The plan: counts per action, the fields that change, the requests and the least time they take.
 * `shortMs`: no answer told the window's length, `least` is at the spec's minute, and this the least
 * time should the window be as short as the longest time-to-reset seen (leastAtLimit): both are said.
 */
export function planLines(plan: MatchPlan, least: number | undefined, shortMs?: number, inFlight = 4): string[] {
  const changes = Object.entries(plan.changes)
    .sort(([, a], [, b]) => b - a)
    .map(([f, n]) => `${sanitizeForTerminal(f)} ${count(n)}`);
  const row = (label: string, n: number, more = ''): string =>
    `  ${label.padEnd(10)} ${count(n).padStart(9)}${more ? `  ${more}` : ''}`;
  const atLeast = (ms: number) => (ms < 1000 ? 'under a second' : `at least ${duration(ms)}`);
  const time =
    least === undefined
      ? ''
      : shortMs === undefined || duration(shortMs) === duration(least)
        ? `, ${atLeast(least)} at the key's rate limit`
        : `, ${atLeast(shortMs)} at the key's rate limit, ${duration(least)} if its window is the spec's minute (no answer has shown its length yet)`;
  return [
    `Plan for ${plural(plan.rows, 'row')} of ${plan.resource}; read: ${plan.read}`,
    row('create', plan.create, plan.resent ? `${count(plan.resent)} sent again under the interrupted run's keys` : ''),
    row('update', plan.update, changes.join(', ')),
    row('unchanged', plan.unchanged, plan.unchanged > 0 ? 'no request' : ''),
    ...(plan.done ? [row('done', plan.done, 'by the interrupted run (the CRM agrees): no request')] : []),
    row('ambiguous', plan.ambiguous, plan.ambiguous > 0 ? 'two or more records have the key: not sent' : ''),
    row(
      'duplicate',
      plan.duplicate,
      plan.duplicate > 0 ? "rows sharing a key, with other values: none of the key's sent" : '',
    ),
    ...(plan.repeated ? [row('repeated', plan.repeated, 'repeating an earlier row exactly: skipped')] : []),
    row('invalid', plan.invalid),
    plan.requests === 0
      ? '  nothing to send'
      : `  requests to send: ${count(plan.requests)}${time}${paced(plan, least, inFlight)}`,
  ];
}

/**
 * The time the requests take at the pace the read's took, when longer than the limit's least (issue 29's re-trial: a
 * server answering in 1.5 s was promised "under a second" for 120 writes that took 45 s): `; about 45 s at the 1.5 s
 * a request took in the read, 4 in flight`. An estimate, not a bound: said as one.
 */
function paced(plan: MatchPlan, least: number | undefined, inFlight: number): string {
  if (plan.read_ms === undefined || plan.read_requests === 0 || plan.requests === 0) return '';
  const each = plan.read_ms / plan.read_requests;
  const ms = (plan.requests * each) / Math.max(1, Math.min(inFlight, plan.requests));
  if (ms < 1000 || ms <= (least ?? 0)) return '';
  const per = each < 1000 ? `${Math.round(each)} ms` : `${Math.round(each / 100) / 10} s`;
  return `; about ${duration(ms)} at the ${per} a request took in the read, ${Math.min(inFlight, plan.requests)} in flight`;
}

/** Before the run, on a terminal (stderr); a dry run prints it as its output (wrapped like this on a terminal, as it is into a pipe). */
export function showPlan(ctx: Ctx, client: HttpClient | undefined, inFlight?: number): (plan: MatchPlan) => void {
  return (plan) => {
    if (ctx.globals.quiet || ctx.io.stderr.isTTY !== true) return;
    const least = leastMs(ctx, plan, client);
    const lines = planLines(plan, least?.ms, least?.shortMs, inFlight);
    ctx.io.stderr.write(`${forStderr(ctx.io.stderr, lines.join('\n'))}\n`);
  };
}

export async function printDryPlan(
  ctx: Ctx,
  s: ImportSummary,
  client: HttpClient | undefined,
  inFlight?: number,
  /** a records file's links, planned */
  extra: Record<string, unknown> = {},
  /** its link columns, and the resource each links to */
  links?: ReadonlyMap<string, string>,
): Promise<void> {
  const { plan, plan_file } = s.reconcile!;
  const least = leastMs(ctx, plan, client);
  const planned = plan_file ? [`Every row's action: ${plan_file}`] : [];
  const lines = [
    'Dry run: nothing was sent.',
    ...planLines(plan, least?.ms, least?.shortMs, inFlight),
    ...mappingLines(plan.mapping, links),
    ...planned,
  ];
  const { resumed: _r, ...fields } = plan;
  return printOut(ctx, { ...fields, least_ms: least?.ms ?? null, dry_run: true, ...extra }, lines);
}
