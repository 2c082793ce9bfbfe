// Byte and text rules for quoted CSV fields never closed: where a broken quote opens, a best-effort split.
import { CR, LF } from '../../util/lines.js';

/** `_error_code` of the row where a quoted field opens that is never closed (or only by a quote that swallowed lines). */
export const UNCLOSED_QUOTE_CODE = 'UNCLOSED_QUOTE';
export const UNCLOSED_QUOTE_REASON =
  'a quoted field starts on this line and is never closed (close it, or write a quote inside a quoted field twice: ""); ' +
  'the lines after it were read as rows of their own';

const QUOTE = 0x22;
const COMMA = 0x2c;

export function hasLineBreak(cell: string): boolean {
  return cell.includes('\n') || cell.includes('\r');
}

/** Where a broken quote opens in a record's bytes (never closed, or spanning lines then "closed" mid-field); -1 if none. */
export function brokenQuoteAt(b: Uint8Array): number {
  const s = new RecordEndScanner(0);
  return (s.push(b) ?? s.finish()).brokenQuote ?? -1;
}

/** Cells of a line with an unclosed quote: split on commas, that cell kept as written, quote included. */
export function splitLine(text: string): string[] {
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === '"') {
      let value = '';
      let j = i + 1;
      let closed = false;
      while (j < text.length) {
        if (text[j] === '"') {
          if (text[j + 1] === '"') {
            value += '"';
            j += 2;
            continue;
          }
          if (j + 1 === text.length || text[j + 1] === ',') {
            closed = true;
            j++;
            break;
          }
        }
        value += text[j];
        j++;
      }
      if (!closed) {
        cells.push(text.slice(i));
        return cells;
      }
      cells.push(value);
      i = j;
    } else {
      const comma = text.indexOf(',', i);
      const end = comma < 0 ? text.length : comma;
      cells.push(text.slice(i, end));
      i = end;
    }
    if (i >= text.length) return cells;
    i++; // the comma
  }
}

/** Where a record too large to parse ends, found by RecordEndScanner. */
export interface RecordEnd {
  /** absolute offset just after the record (after its line break), or the end of the file */
  end: number;
  /** line breaks from the record's start to `end` */
  lines: number;
  /** a quoted field opened at this offset is broken (as in brokenQuoteAt): the record ends with the quote's line */
  brokenQuote?: number;
}

const enum S {
  FieldStart,
  Unquoted,
  Quoted,
  /** a quote inside a quoted field: closes it, or is the first of `""` */
  QuoteInQuoted,
}

/**
 * Where a record ends, byte by byte in O(1) memory; push() until found, then finish(). A line break
 * outside quotes ends it; a quoted field that spans lines and is then never closed (or closed
 * mid-field) is broken: the record ends with the quote's line. A stray quote on one line is text.
 */
export class RecordEndScanner {
  private state = S.FieldStart;
  private lines = 0;
  private prevCR = false;
  /** a CR ended the record: a LF right after it belongs to it */
  private endAtCR = -1;
  private open = -1;
  /** where the line the open quote is on ends, and the line breaks up to there */
  private quoteLineEnd = -1;
  private quoteLines = 0;
  private at: number;

  constructor(start: number) {
    this.at = start;
  }

  push(chunk: Uint8Array): RecordEnd | undefined {
    for (let i = 0; i < chunk.length; i++, this.at++) {
      const b = chunk[i]!;
      if (this.endAtCR >= 0) return { end: b === LF ? this.at + 1 : this.at, lines: this.lines };
      const lf = b === LF && this.prevCR;
      if (b === CR || (b === LF && !lf)) this.lines++;
      if (lf && this.quoteLineEnd === this.at) this.quoteLineEnd++;
      this.prevCR = b === CR;
      if (this.state === S.FieldStart) {
        if (b === QUOTE) {
          this.state = S.Quoted;
          this.open = this.at;
          this.quoteLineEnd = -1;
          continue;
        }
        this.state = S.Unquoted;
      }
      if (this.state === S.Unquoted) {
        if (b === COMMA) this.state = S.FieldStart;
        else if (b === CR) this.endAtCR = this.at;
        else if (b === LF) return { end: this.at + 1, lines: this.lines };
      } else if (this.state === S.Quoted) {
        if (b === QUOTE) this.state = S.QuoteInQuoted;
        else if ((b === CR || b === LF) && !lf && this.quoteLineEnd < 0) {
          this.quoteLineEnd = this.at + 1;
          this.quoteLines = this.lines;
        }
      } else if (b === QUOTE) this.state = S.Quoted;
      else if (b === COMMA) this.state = S.FieldStart;
      else if (b === CR) this.endAtCR = this.at;
      else if (b === LF) return { end: this.at + 1, lines: this.lines };
      else if (this.quoteLineEnd >= 0) return this.broken();
      // a stray quote on one line: the field goes on as text
      else this.state = S.Unquoted;
    }
    return undefined;
  }

  /** The end of the file reached. */
  finish(): RecordEnd {
    if (this.endAtCR >= 0) return { end: this.at, lines: this.lines };
    if (this.state === S.Quoted) return this.broken();
    return { end: this.at, lines: this.lines };
  }

  private broken(): RecordEnd {
    if (this.quoteLineEnd < 0) return { end: this.at, lines: this.lines, brokenQuote: this.open };
    return { end: this.quoteLineEnd, lines: this.quoteLines, brokenQuote: this.open };
  }
}
