// Values typed from text (`amount:number` and `meta:json` cells, `--set field:=json`) reach the API
// as JSON built from JS values. Two ways that silently changes data, closed here: a number a
// double cannot hold (`12345678901234567891`, `1e-400`, `0.10000000000000000001`) would be sent
// rounded, and a field named `__proto__` set by assignment would become the object's prototype
// and vanish from the body.

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

interface Decimal {
  negative: boolean;
  /** significant digits, no leading or trailing zeros; '' for zero */
  digits: string;
  /** the power of ten of the last significant digit */
  exp: number;
}

function decimal(text: string): Decimal | undefined {
  const m = DECIMAL.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  const all = `${m[2] ?? ''}${fraction}`.replace(/^0+/, '');
  const digits = all.replace(/0+$/, '');
  if (digits === '') return { negative: false, digits: '', exp: 0 };
  return { negative: m[1] === '-', digits, exp: Number(m[4] ?? 0) - fraction.length + (all.length - digits.length) };
}

/**
 * The number a decimal text means, when a double holds it exactly as written (the double prints
 * back as the same decimal value: `1e3` → 1000, `0.1` → 0.1, `-0` → 0); undefined otherwise.
 */
export function exactNumber(text: string): number | undefined {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) return undefined;
  const a = decimal(text);
  const b = decimal(String(n));
  if (!a || !b) return undefined;
  return a.digits === b.digits && a.exp === b.exp && a.negative === b.negative ? n : undefined;
}

// In valid JSON, digits outside strings belong to numbers: skip the strings, check the numbers.
const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** The first number in a valid JSON text that a double cannot hold exactly, or undefined. */
export function inexactJsonNumber(json: string): string | undefined {
  for (const [token] of json.matchAll(JSON_TOKEN)) {
    if (token[0] !== '"' && exactNumber(token) === undefined) return token;
  }
  return undefined;
}

/** `obj[key] = value` that makes an own property even for `__proto__`, never a prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
