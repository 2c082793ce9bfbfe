// JSON that keeps numbers as the server sent them: one no double holds (12345678901234567891, 1e400)
// is kept as a RawNumber (its source text) that every writer prints. A pre-scan (maybeInexact) sends
// other bodies to plain JSON.parse.

/** A JSON number that no double holds exactly, kept as its source text (e.g. `12345678901234567891`). */
export class RawNumber {
  /** true once any RawNumber exists: until then stringifyJson is plain JSON.stringify */
  static seen = false;
  constructor(readonly text: string) {
    RawNumber.seen = true;
  }
  /** for a JSON.stringify that is not stringifyJson: the digits, as a string */
  toJSON(): string {
    return this.text;
  }
  toString(): string {
    return this.text;
  }
}

// Where the exact path looks next: a string's start or a number's; and JSON's number grammar.
const STRING_OR_NUMBER = /["\-0-9]/g;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** a colon after a number: the number stands where a key must (not JSON), so it stays unmarked for JSON.parse to refuse */
const KEY_COLON = /\s*:/y;
const SAFE_INTEGER_TEXT = /^-?\d{1,15}$/;
/** at most 15 digits with a point: a double holds every such decimal exactly as written (DBL_DIG) */
const SHORT_DECIMAL_TEXT = /^-?(?=[\d.]{3,16}$)\d+\.\d+$/;
// A random per-process mark no server string can pass for, made on first use (globalThis.crypto loads
// lazily: startup time). Letters, digits and `~:-`, as a RawNumber's text: no escaping in the regex.
let nonceText: string | undefined;
const nonce = (): string => (nonceText ??= `~crm-raw-number-${globalThis.crypto.randomUUID()}:`);
let marks: RegExp | undefined;
const rawMarks = (): RegExp => (marks ??= new RegExp(`"${nonce()}([-+.0-9eE]+)"`, 'g'));

/** JSON.parse, except that numbers a double cannot hold exactly become RawNumber. Throws SyntaxError as JSON.parse. */
export function parseJson(text: string): unknown {
  return maybeInexact(text) ? parseExact(text) : JSON.parse(text);
}

/**
 * Whether `text` has a number token, outside strings, that could be inexact: 16+ digit/point characters or an exponent
 * (15 significant digits always survive a double). A scan that jumps over strings (indexOf): half the time of the
 * regex it replaces, which tried every character (~90 µs a list page of 100 records, as much as JSON.parse). A text
 * that is not JSON may say either: JSON.parse refuses it on both paths.
 */
export function maybeInexact(text: string): boolean {
  const n = text.length;
  for (let i = 0; i < n;) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
      continue;
    }
    if (c !== 0x2d && (c < 0x30 || c > 0x39)) {
      i++;
      continue;
    }
    const start = c === 0x2d ? i + 1 : i;
    let k = start;
    for (; k < n; k++) {
      const d = text.charCodeAt(k);
      if ((d < 0x30 || d > 0x39) && d !== 0x2e) break;
    }
    if (k - start >= 16) return true;
    const after = text.charCodeAt(k);
    if (after === 0x65 || after === 0x45) return true;
    i = k > i ? k : i + 1;
  }
  return false;
}

/** The exact path (exported for tests): each inexact token becomes a string of the nonce and its index, revived as a RawNumber. */
export function parseExact(text: string): unknown {
  const raws: string[] = [];
  let marked = '';
  let copied = 0; // text before this is in `marked`
  forEachNumber(text, (token, at) => {
    KEY_COLON.lastIndex = at + token.length;
    if (exactNumber(token) !== undefined || KEY_COLON.test(text)) return;
    raws.push(token);
    marked += `${text.slice(copied, at)}"${nonce()}${raws.length - 1}"`;
    copied = at + token.length;
  });
  if (raws.length === 0) return JSON.parse(text);
  try {
    return JSON.parse(marked + text.slice(copied), (_key, value: unknown) =>
      typeof value === 'string' && value.startsWith(nonce())
        ? new RawNumber(raws[Number(value.slice(nonce().length))] as string)
        : value,
    );
  } catch (err) {
    JSON.parse(text); // its own error: the marked text's would show the marks and their positions
    throw err;
  }
}

/** Calls `visit` with each number token outside strings, in order, until it returns false. */
function forEachNumber(text: string, visit: (token: string, at: number) => boolean | void): void {
  for (let at = nextToken(text, 0); at >= 0;) {
    if (text.charCodeAt(at) === 0x22) {
      at = nextToken(text, stringEnd(text, at));
      continue;
    }
    NUMBER.lastIndex = at;
    const token = NUMBER.exec(text)?.[0];
    if (token === undefined) {
      at = nextToken(text, at + 1); // a lone '-': not JSON, which JSON.parse will say
      continue;
    }
    if (visit(token, at) === false) return;
    at = nextToken(text, at + token.length);
  }
}

function nextToken(text: string, from: number): number {
  STRING_OR_NUMBER.lastIndex = from;
  return STRING_OR_NUMBER.exec(text)?.index ?? -1;
}

/** Just after the closing quote of the string opening at `open` (the text's end if it has none). */
function stringEnd(text: string, open: number): number {
  for (let i = open + 1; ;) {
    const quote = text.indexOf('"', i);
    if (quote < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    i = quote + 1;
  }
}

/**
 * The number a decimal text means when a double holds it exactly (`1.50` → 1.5, `1e2` → 100), else
 * undefined (`1e400`, `12345678901234567891`, not a decimal). The one rule for every number crm reads.
 */
export function exactNumber(text: string): number | undefined {
  if (SAFE_INTEGER_TEXT.test(text) || SHORT_DECIMAL_TEXT.test(text)) return Number(text);
  const n = Number(text);
  if (text === '' || !Number.isFinite(n)) return undefined;
  const value = decimalValue(text);
  return value !== undefined && value === decimalValue(String(n)) ? n : undefined;
}

/** A canonical form of a decimal's value: sign, significant digits, exponent (`-123e-2`); zero is `0`. */
export function decimalValue(text: string): string | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const [, sign, int = '', frac = '', exp = '0'] = m;
  const all = `${int}${frac}`.replace(/^0+/, '');
  if (all === '') return '0';
  const digits = all.replace(/0+$/, '');
  // BigInt: an exponent such as 1e-99999999999999999999 must not round in a double
  const e = BigInt(exp) - BigInt(frac.length) + BigInt(all.length - digits.length);
  return `${sign === '-' ? '-' : ''}${digits}e${e}`;
}

/** JSON.stringify, but a RawNumber is written as its digits and a bigint as a string. */
export function stringifyJson(value: unknown, indent?: number): string | undefined {
  if (!RawNumber.seen)
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), indent);
  const json = JSON.stringify(
    value,
    function (this: Record<string, unknown>, key: string, v: unknown) {
      const original = this[key];
      if (original instanceof RawNumber) return `${nonce()}${original.text}`;
      return typeof v === 'bigint' ? v.toString() : v;
    },
    indent,
  );
  return json?.replace(rawMarks(), '$1');
}
