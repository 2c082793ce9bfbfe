// Terminal columns of text, with the string-width cli-table3 uses (so our cuts and its borders
// agree). Text is cut and wrapped between graphemes, never inside an emoji.
import stringWidth from 'string-width';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
/** printable ASCII: one column per character, the common case, measured without string-width */
const ASCII = /^[\x20-\x7e]*$/;

/** Terminal columns of the widest line of `text`. */
export function displayWidth(text: string): number {
  let widest = 0;
  for (const line of text.split('\n')) widest = Math.max(widest, ASCII.test(line) ? line.length : stringWidth(line));
  return widest;
}

/** `text` as the characters a reader sees (grapheme clusters: a flag, an emoji with its skin tone, a letter with its accent). */
export function graphemes(text: string): string[] {
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/** How many graphemes of `parts`, from `from`, fit in `max` columns. */
function prefixWithin(parts: readonly string[], max: number, from = 0): number {
  let used = 0;
  let n = 0;
  while (from + n < parts.length) {
    const w = stringWidth(parts[from + n]!);
    if (used + w > max) break;
    used += w;
    n++;
  }
  // per-grapheme widths may differ from the whole string's by a column: trust the whole
  while (n > 0 && stringWidth(parts.slice(from, from + n).join('')) > max) n--;
  return n;
}

/** `text` cut to `max` columns, ending with `…` when cut; 0 = no limit. */
export function cutToWidth(text: string, max: number): string {
  if (max <= 0) return text;
  if (ASCII.test(text)) return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
  if (stringWidth(text) <= max) return text;
  const parts = graphemes(text);
  return `${parts.slice(0, prefixWithin(parts, Math.max(0, max - 1))).join('')}…`;
}

export interface Wrapped {
  lines: string[];
  /** a word longer than a line had to be broken inside (it cannot be copied in one piece) */
  broken: boolean;
}

/**
 * `text` wrapped to lines of at most `max` columns, at spaces where it can. A word longer than a line
 * (a URL, a path) is broken inside (`long: 'break'`, the default: a table cell must fit its column), or
 * goes whole on a line of its own, wider than `max` (`long: 'whole'`: text to read and copy, where the
 * terminal's own wrap keeps it one line to copy).
 */
export function wrapToWidth(text: string, max: number, opts: { long?: 'break' | 'whole' } = {}): Wrapped {
  const lines: string[] = [];
  let broken = false;
  for (const paragraph of text.split('\n')) {
    if (max <= 0 || stringWidth(paragraph) <= max) {
      lines.push(paragraph);
      continue;
    }
    let line = '';
    for (const word of paragraph.split(/(?<=\s)(?=\S)/)) {
      if (stringWidth(line + word.trimEnd()) <= max) {
        line += word;
        continue;
      }
      if (line.trim() !== '') lines.push(line.trimEnd());
      line = word;
      const bare = word.trimEnd();
      if (stringWidth(bare) > max && opts.long !== 'whole') {
        // a word wider than a whole line: break it, whole graphemes per line
        broken = true;
        const parts = graphemes(bare);
        let from = 0;
        for (let n = prefixWithin(parts, max); from + n < parts.length; n = prefixWithin(parts, max, from)) {
          const take = Math.max(1, n); // a grapheme wider than a line goes alone
          lines.push(parts.slice(from, from + take).join(''));
          from += take;
        }
        line = from < parts.length ? parts.slice(from).join('') + word.slice(bare.length) : '';
      }
    }
    if (line.trim() !== '' || lines.length === 0) lines.push(line.trimEnd());
  }
  return { lines, broken };
}

/**
 * `head` then `text`, wrapped for a terminal `columns` wide (none: one line): beside `head`, each
 * line hanging under the text's first word, when `minColumns` are left there, else under `head` at
 * `under` columns. The terminal never wraps it (mid-word, a line starting with a space). `long`:
 * what a word longer than a line does (wrapToWidth).
 */
export function wrapHanging(
  head: string,
  text: string,
  columns: number | undefined,
  under: number,
  minColumns: number,
  opts: { long?: 'break' | 'whole' } = {},
): string[] {
  if (!columns || displayWidth(head + text) <= columns) return [head + text];
  const beside = columns - displayWidth(head) >= minColumns;
  const indent = beside ? displayWidth(head) : under;
  const wrapped = wrapToWidth(text, columns - indent, opts).lines.map((l) => ' '.repeat(indent) + l);
  return beside ? [head + wrapped[0]!.slice(indent), ...wrapped.slice(1)] : [head.trimEnd(), ...wrapped];
}

/** `-o`, `--encoding`: a flag that may take the next word as its value (so they stay on one line) */
const FLAG = /^-{1,2}[a-zA-Z][\w-]*$/;

/** `text` holds an odd number of `quote`: a quoted span is open. */
const odd = (text: string, quote: string): boolean => text.split(quote).length % 2 === 0;

/**
 * The pieces of a notice line no wrap may break (each with its following spaces): a word, a
 * `quoted span` or "quoted span" (`--map "E-mail Address=email"` pasted whole), a flag with its
 * value, a `crm …` command (up to a `(`, or a word ending a clause).
 */
export function noticeUnits(line: string): string[] {
  const units: string[] = [];
  let inCommand = false;
  for (const piece of line.match(/\S+\s*|^\s+/g) ?? []) {
    const word = piece.trimEnd();
    const last = units.at(-1);
    const glue =
      last !== undefined &&
      /\s$/.test(last) &&
      (odd(last, '`') || odd(last, '"') || FLAG.test(last.trimEnd()) || (inCommand && !word.startsWith('(')));
    if (glue) units[units.length - 1] += piece;
    else units.push(piece);
    if (word.startsWith('(')) inCommand = false;
    if (word === 'crm') inCommand = true;
    else if (/[.,;:]$/.test(word)) inCommand = false;
  }
  return units;
}

/** an indented line to copy and paste: a command (`crm`, `npm`, `node`, `export`), or one after variables (`X=1 crm …`) */
const COMMAND_LINE = /^\s+(?:[A-Za-z_][\w]*=\S*\s+)*(?:crm|npm|node|export|\$)(?:\s|$)|^\s+[A-Za-z_]\w*=/;

/**
 * A notice, warning or hint wrapped for a terminal `max` columns wide, at spaces only: an indented
 * command line (a command to copy) is left whole, and so is every unit of `noticeUnits` (a word wider
 * than a line goes alone on its line): a pasted command must be one line. Another indented line (a
 * plan's row, a list's item) goes on two columns further in (trial: they were cut mid-word).
 */
export function wrapNotice(text: string, max: number): string {
  if (max <= 0) return text;
  return text
    .split('\n')
    .map((line) => {
      if (COMMAND_LINE.test(line) || displayWidth(line) <= max) return line;
      const lead = /^\s*/.exec(line)![0];
      const more = lead === '' ? '' : `${lead}  `;
      const out: string[] = [];
      let current = lead;
      for (const unit of noticeUnits(line.slice(lead.length))) {
        if (current.trim() !== '' && displayWidth(current + unit.trimEnd()) > max) {
          out.push(current.trimEnd());
          current = more;
        }
        current += unit;
      }
      out.push(current.trimEnd());
      return out.join('\n');
    })
    .join('\n');
}

/** `text` for `stream` (stderr, or stdout for text a person reads): wrapped to the terminal's width when it is one; as it is into a file or pipe. */
export function forTerminal(stream: { isTTY?: boolean; columns?: number }, text: string): string {
  return stream.isTTY && stream.columns ? wrapNotice(text, stream.columns) : text;
}

/** `text` for standard error (`forTerminal`). */
export const forStderr = forTerminal;
