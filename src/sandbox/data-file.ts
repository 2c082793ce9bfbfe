// `--data-file F` (docs/sandbox.md, "Seed and data file"): the store and the answered idempotency keys,
// loaded at start, saved together (a record and the key that created it are kept or lost together).
import { isResourceName } from '../api/resources.js';
import { stringifyJson } from '../json/exact-json.js';
import { writeFileAtomic } from '../util/atomic-file.js';
import { readJsonFile } from './files.js';
import type { SavedIdempotencyEntry } from './idempotency.js';
import type { StoreSnapshot } from './store.js';
import { isPlainObject, needIn, type Need } from './validation.js';

/** What F holds; `idempotency` is optional (older files have none). */
export type DataFile = StoreSnapshot & { idempotency?: SavedIdempotencyEntry[] };

/** The content of F, undefined when F does not exist; throws an Error naming F when malformed. */
export function loadDataFile(path: string): DataFile | undefined {
  const parsed = readJsonFile(path, `data file ${path}`, true);
  return parsed === undefined ? undefined : validateSnapshot(parsed, `data file ${path}`);
}

const strings = (o: Record<string, unknown>, fields: string[]) => fields.every((f) => typeof o[f] === 'string');
const isResource = (v: unknown) => typeof v === 'string' && isResourceName(v);

function validLink(link: unknown): boolean {
  return (
    isPlainObject(link) &&
    strings(link, ['id', 'parent_id', 'relation', 'child_id', 'created_at']) &&
    isResource(link.parent_type) &&
    isResource(link.child_type)
  );
}

function validIdempotencyEntry(e: unknown): boolean {
  if (!isPlainObject(e) || !strings(e, ['api_key_sha256', 'key', 'fingerprint']) || !Number.isFinite(e.stored_at))
    return false;
  const r = e.response;
  return (
    isPlainObject(r) &&
    Number.isInteger(r.status) &&
    isPlainObject(r.headers) &&
    Object.values(r.headers).every((h) => typeof h === 'string') &&
    (r.raw === undefined || typeof r.raw === 'string')
  );
}

function validateSnapshot(v: unknown, where: string): DataFile {
  const need: Need = needIn(where);
  need(
    isPlainObject(v) && v.format === 'crm-sandbox-store/1',
    'not a sandbox data file (format "crm-sandbox-store/1" expected)',
  );
  need(Number.isSafeInteger(v.seq) && (v.seq as number) >= 0, '"seq" must be a non-negative integer');
  need(isPlainObject(v.records), '"records" must be an object');
  for (const [name, rows] of Object.entries(v.records)) {
    need(isResourceName(name), `records: unknown resource "${name}"`);
    need(Array.isArray(rows), `records.${name} must be an array`);
    rows.forEach((r: unknown, i) =>
      need(
        isPlainObject(r) && typeof r.id === 'string' && r.id !== '',
        `records.${name}[${i}] must be an object with a string id`,
      ),
    );
  }
  need(Array.isArray(v.links), '"links" must be an array');
  v.links.forEach((link: unknown, i) => need(validLink(link), `links[${i}] is not a valid link`));
  need(v.idempotency === undefined || Array.isArray(v.idempotency), '"idempotency" must be an array');
  (v.idempotency ?? []).forEach((e: unknown, i) =>
    need(validIdempotencyEntry(e), `idempotency[${i}] is not a valid idempotency entry`),
  );
  return v as unknown as DataFile;
}

/** Writes F atomically (src/util: a temporary file beside it, mode 0600, fsync, rename). */
export const saveDataFile = (path: string, snapshot: DataFile): Promise<void> =>
  writeFileAtomic(path, stringifyJson(snapshot) as string); // a RawNumber as its digits, read back exact (files.ts)

/** Saves `delayMs` after the first unsaved change, one save at a time; `flush` saves now, `close` for the last time. */
export class AutoSaver {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly snapshot: () => DataFile,
    private readonly delayMs: number,
  ) {}

  changed(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => void this.flush().catch(() => {}), this.delayMs);
    this.timer.unref();
  }

  /** Saves now (after a save under way) and stops the timer. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.saving = this.saving.catch(() => {}).then(() => saveDataFile(this.path, this.snapshot()));
    return this.saving;
  }

  /** The last save. A request still running past it is not saved: its answer reached nobody, and another sandbox may own the file by then. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }
}
