// The spreadsheet formula guard of csv/tsv output and its exact inverse, used by `crm batch` when
// it reads a cell. Side by side on purpose: the two must agree on one rule, or a list exported
// and imported again would change values (`+15551230000` coming back as `'+15551230000`).
//
// guard: a text that starts with a trigger, or with one or more `'` and then a trigger, gets one
// more `'` in front. A spreadsheet then shows it as text instead of running it (OWASP CSV
// injection), and the output never starts with a trigger.
// unguard: a cell of one or more `'` and then a trigger loses one `'`; any other cell is kept.
//
// This is a bijection: unguard(guard(v)) === v for every v. A guarded text always matches the
// unguard pattern; an unguarded one never does (if it did, it would have been guarded). Guarding
// texts that already start with `'`+trigger is what makes it so: a value `'-12` from the server is
// written `''-12` and read back as `'-12`, not as `-12`.
//
// Triggers: OWASP's list (= + - @ tab CR), plus LF and the full-width forms of the four signs,
// which some spreadsheets fold to ASCII before deciding a cell is a formula.

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
