// The end of a `crm batch` summary: why rows failed, grouped (`25 × VALIDATION_FAILED  email: required`, as
// `sf data bulk results` groups them), and one plain sentence of what happened.
import { findResource } from '../../api/resources.js';
import { OTHER_REASONS, type ImportSummary, type Reason } from '../../import/index.js';
import { count as n, plural } from '../../output/plural.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { graphemes, wrapHanging, wrapToWidth } from '../../output/width.js';

/** groups named in the text; the rest is one "and N other reasons" line */
const SHOWN = 3;
/** a reason longer than this (server text) is cut, saying so: `-o json` has it whole */
const MAX_MESSAGE = 600;
/** the fewest columns a wrapped reason keeps beside its count and code, else it goes under them */
const MIN_MESSAGE_COLUMNS = 30;
/** the indent of a reason under its count and code */
const UNDER = 6;

/**
 * The lines under the summary saying why rows failed or were invalid; none when every row went
 * through. On a terminal `columns` wide, each reason is wrapped to it, hanging under its first word
 * (new-user trial: cut at 80 columns, the reason could not be read); never cut below MAX_MESSAGE.
 * The rows of reasons not shown: where each one's reason is (`rejectsFile`, else `-o json`).
 */
export function reasonLines(reasons: readonly Reason[], columns?: number, rejectsFile?: string | null): string[] {
  if (reasons.length === 0) return [];
  const named = reasons.filter((r) => r.code !== OTHER_REASONS);
  const shown = named.slice(0, SHOWN);
  const rest = [...named.slice(SHOWN), ...reasons.filter((r) => r.code === OTHER_REASONS)];
  const width = Math.max(...shown.map((r) => n(r.count).length));
  const lines = shown.flatMap((r) => {
    const head = `  ${n(r.count).padStart(width)} × ${sanitizeForTerminal(r.code)}  `;
    const msg = sanitizeForTerminal(r.message);
    const chars = graphemes(msg);
    const whole =
      chars.length <= MAX_MESSAGE
        ? msg
        : `${chars.slice(0, MAX_MESSAGE).join('')}… (${plural(chars.length - MAX_MESSAGE, 'more character')}; -o json shows them all)`;
    // beside the count and code when enough room is left there, else under them
    return wrapHanging(head, whole, columns, UNDER, MIN_MESSAGE_COLUMNS, { long: 'whole' });
  });
  const rows = rest.reduce((sum, r) => sum + r.count, 0);
  if (rows > 0) {
    const where = rejectsFile ? `every row with its reason: ${sanitizeForTerminal(rejectsFile)}` : '-o json lists them';
    const others = `and ${n(rows)} ${rows === 1 ? 'row' : 'rows'} for other reasons (${where})`;
    // the lines after the first under its text; a word wider than a line (the rejects file's path)
    // whole on its own line, so it can be copied
    const [first, ...more] = columns ? wrapToWidth(others, columns - 4, { long: 'whole' }).lines : [others];
    lines.push(`  ${first}`, ...more.map((l) => `    ${l}`));
  }
  return ['Why rows failed:', ...lines];
}

/** How a run ended early: interrupted (Ctrl-C), or stopped by an error. */
export type Stopped = 'interrupted' | 'stopped';

/**
 * One sentence of what happened, every row accounted for: "Created 1,700 of 1,740 contacts; 40 failed (see
 * m.rejects.csv)."
 */
export function outcomeSentence(s: ImportSummary, stopped?: Stopped, restore?: string): string {
  const op = s.operation;
  const verb = op?.done ?? 'created';
  const noun =
    op?.kind === 'link'
      ? `rows (${op.name} links)`
      : s.rows === 1
        ? (findResource(s.resource)?.singular ?? s.resource)
        : s.resource;
  const repeated = s.repeated ?? 0;
  const earlier = s.skipped - repeated;
  const rejected = s.failed - s.in_doubt - s.unknown;
  const parts = [
    earlier > 0 ? `${n(earlier)} ${verb} by an earlier run` : '',
    repeated > 0 ? `${n(repeated)} skipped as repeating an earlier row` : '',
    [rejected > 0 ? `${n(rejected)} failed` : '', s.invalid > 0 ? `${n(s.invalid)} invalid` : '']
      .filter(Boolean)
      .join(' and ') + (rejected + s.invalid > 0 && s.rejects_file ? ` (see ${s.rejects_file})` : ''),
    s.in_doubt > 0 ? `${n(s.in_doubt)} sent without an answer (may have been ${verb})` : '',
    s.unknown > 0 ? `${n(s.unknown)} not known to be ${verb}${s.unknown_file ? ` (see ${s.unknown_file})` : ''}` : '',
    s.not_sent > 0 ? `${n(s.not_sent)} not sent yet` : '',
    // only when something was deleted: the backup holds no record whose DELETE was refused (CONTRACT §7c)
    s.backup_file !== undefined && s.created + earlier > 0 ? keptIn(s.backup_file, s.created + earlier, restore) : '',
  ].filter(Boolean);
  const head = `${n(s.created)} of ${n(s.rows)} ${noun}`;
  const first =
    stopped === undefined
      ? `${verb[0]!.toUpperCase()}${verb.slice(1)} ${head}`
      : `${stopped === 'interrupted' ? 'Interrupted' : 'Stopped'}: ${verb} ${head}`;
  return `${sanitizeForTerminal([first, ...parts].join('; '))}.`;
}

/** Where a delete kept its records, and the command that creates them again (`restore`, as crmCommand prints it). */
function keptIn(file: string, deleted: number, restore: string | undefined): string {
  const [them, each] = deleted === 1 ? ['it', ''] : ['them', 'each '];
  return `${each}kept first in ${file} (${restore ? `\`${restore}\`` : 'importing it'} creates ${them} again, with new ids)`;
}
