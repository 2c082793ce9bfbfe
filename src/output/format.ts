// The output formats (`-o`), and the fields of a record: values at dot paths such as `link.type`,
// the record cut down to `--fields`, and the columns of a tabular output.

export const OUTPUT_FORMATS = ['table', 'json', 'ndjson', 'csv', 'tsv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** The value at a dot path (`tags.0` indexes arrays); a key containing the dot (`{"link.type": 1}`) wins. */
export function getPath(record: unknown, path: string): unknown {
  if (!isObject(record)) return undefined;
  if (Object.hasOwn(record, path)) return record[path];
  let current: unknown = record;
  for (const key of path.split('.')) {
    if (!isObject(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/** The record cut to `fields`, keeping its shape (`link.type` → `{"link": {"type": …}}`); missing → null, in order. */
export function projectFields(record: unknown, fields: readonly string[]): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  const ours = new WeakSet<object>([out]); // objects built here, safe to write into
  for (const f of fields) {
    const value = getPath(record, f);
    const keys = isObject(record) && Object.hasOwn(record, f) ? [f] : f.split('.');
    let target = out;
    for (let i = 0; i < keys.length - 1; i++) {
      const k = keys[i] as string;
      const next = target[k];
      if (isObject(next) && ours.has(next)) {
        target = next;
        continue;
      }
      // copy a value an earlier field put here (`link` then `link.type`) instead of writing into the input
      const created = Object.assign(
        Object.create(null) as Record<string, unknown>,
        isObject(next) && !Array.isArray(next) ? next : {},
      );
      ours.add(created);
      target[k] = created;
      target = created;
    }
    target[keys[keys.length - 1] as string] = value === undefined ? null : value;
  }
  return out;
}

/** The columns of a tabular output: `--fields`, else the given defaults, else the keys of `first`. */
export function columnsFor(first: unknown, fields?: readonly string[], defaults?: readonly string[]): string[] {
  if (fields && fields.length > 0) return [...fields];
  if (defaults && defaults.length > 0) return [...defaults];
  return isObject(first) && !Array.isArray(first) ? Object.keys(first) : ['value'];
}

/**
 * The header of a csv/tsv written without `--fields`: every field of `records` (the first ones of the list), in the
 * order first seen, with those among `defaults` (the command's columns) first, in their order; `value` when no
 * record is an object. The union, not the first record's keys: a field the first record lacks is still exported.
 */
export function headerColumns(records: readonly unknown[], defaults: readonly string[] = []): string[] {
  const seen = new Set<string>();
  let objects = false;
  for (const r of records) {
    if (!isObject(r) || Array.isArray(r)) continue;
    objects = true;
    for (const k of Object.keys(r)) seen.add(k);
  }
  if (!objects) return ['value'];
  const first = defaults.filter((c) => seen.has(c));
  return [...new Set([...first, ...seen])];
}
