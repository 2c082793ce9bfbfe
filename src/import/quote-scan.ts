// Byte- and text-level rules for quoted CSV fields that are never closed (see reader.ts): where a
// record's broken quote opens, how many lines a span holds, and a best-effort split of the bad line
// for the rejects file.

/** `_error_code` of the row where a quoted field opens that is never closed (or only by a quote that swallowed lines). */
export const UNCLOSED_QUOTE_CODE = 'UNCLOSED_QUOTE';
export const UNCLOSED_QUOTE_REASON =
  'a quoted field starts on this line and is never closed (close it, or write a quote inside a quoted field twice: ""); ' +
  'the lines after it were read as rows of their own';

export const CR = 0x0d;
export const LF = 0x0a;
const QUOTE = 0x22;
const COMMA = 0x2c;

export function hasLineBreak(cell: string): boolean {
  return cell.includes('\n') || cell.includes('\r');
}

/** Line breaks in `bytes` (CRLF, LF, CR: one each). */
export function countLines(bytes: Buffer): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === CR || (bytes[i] === LF && bytes[i - 1] !== CR)) n++;
  }
  return n;
}

/**
 * Where, in the bytes of a record (from its start; for the last one, to the end of the file), a
 * quoted field opens that is broken: never closed, or running over a line end and then "closed"
 * by a quote followed by neither a comma, a line end nor the end. -1 when every quoted field
 * closes as RFC 4180 says (a quoted field may span lines) or breaks on its own line (a stray
 * quote, kept as text by relax_quotes: not a quote that swallowed lines).
 */
export function brokenQuoteAt(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  for (;;) {
    if (i < n && b[i] === QUOTE) {
      const open = i;
      let lines = false;
      for (i++; ; i++) {
        if (i >= n) return open;
        const c = b[i];
        if (c === CR || c === LF) lines = true;
        if (c !== QUOTE) continue;
        if (b[i + 1] === QUOTE) {
          i++;
          continue;
        }
        const d = b[i + 1];
        i++;
        if (i >= n || d === COMMA || d === CR || d === LF) break;
        if (lines) return open;
        // a stray quote on one line: the field goes on as text, as csv-parse does
        while (i < n && b[i] !== COMMA && b[i] !== CR && b[i] !== LF) i++;
        break;
      }
    } else {
      while (i < n && b[i] !== COMMA && b[i] !== CR && b[i] !== LF) i++;
    }
    if (i >= n || b[i] !== COMMA) return -1;
    i++;
  }
}

/**
 * The cells of a line whose quoted field is never closed, as well as they can be told: cells split
 * on commas, a quoted cell unquoted (`""` → `"`) when its quote closes on the line, and the cell
 * whose quote does not close kept as written, opening quote included, so the rejects file shows
 * what to fix.
 */
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
