// The csv/tsv formula guard (OWASP CSV injection) and its exact inverse, so an export imports back
// unchanged: guarding `'`+trigger too makes it a bijection (`'-12` → `''-12` → `'-12`).
// Triggers: OWASP's (= + - @ tab CR), LF, and the full-width signs some spreadsheets fold to ASCII.

const TRIGGER = '=+\\-@\\t\\r\\n\\uff1d\\uff0b\\uff0d\\uff20';
const GUARDED = new RegExp(`^'*[${TRIGGER}]`);
const UNGUARD = new RegExp(`^'+[${TRIGGER}]`);

/** The text as written to a csv/tsv cell: `'` added in front when a spreadsheet could run it. */
export function guardFormula(text: string): string {
  return GUARDED.test(text) ? `'${text}` : text;
}

/** Exactly undoes guardFormula: drops one `'` from a cell of `'`s followed by a trigger. */
export function unguardFormula(cell: string): string {
  return UNGUARD.test(cell) ? cell.slice(1) : cell;
}
