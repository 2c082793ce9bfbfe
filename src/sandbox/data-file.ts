// `--data-file F` (docs/sandbox.md, "Seed and data file"): load the store and the answered
// idempotency keys at start, save them together atomically (F.tmp-PID, fsync, rename) on close
// and a few seconds after a change, so that a record and the key that created it are saved or
// lost together. A file without `idempotency` (written before it was saved) loads with no keys.
import { readFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { isResourceName } from '../api/resources.js';
import type { SavedIdempotencyEntry } from './idempotency.js';
import type { StoreSnapshot } from './store.js';
import { isPlainObject } from './validation.js';

/** What F holds: the store, and the answered idempotency keys (optional: older files have none). */
export interface DataFile extends StoreSnapshot {
  idempotency?: SavedIdempotencyEntry[];
}

/** The content of F, undefined when F does not exist; throws an Error naming F when malformed. */
export function loadDataFile(path: string): DataFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`data file ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`data file ${path}: not valid JSON (${(err as Error).message})`);
  }
  return validateSnapshot(parsed, `data file ${path}`);
}

export function validateSnapshot(value: unknown, where: string): DataFile {
  const fail = (what: string): never => {
    throw new Error(`${where}: ${what}`);
  };
  if (!isPlainObject(value) || value.format !== 'crm-sandbox-store/1') fail('not a sandbox data file (format "crm-sandbox-store/1" expected)');
  const v = value as Record<string, unknown>;
  if (typeof v.seq !== 'number' || !Number.isSafeInteger(v.seq) || v.seq < 0) fail('"seq" must be a non-negative integer');
  if (!isPlainObject(v.records)) fail('"records" must be an object');
  for (const [name, rows] of Object.entries(v.records as object)) {
    if (!isResourceName(name)) fail(`records: unknown resource "${name}"`);
    if (!Array.isArray(rows)) fail(`records.${name} must be an array`);
    (rows as unknown[]).forEach((row, i) => {
      if (!isPlainObject(row) || typeof row.id !== 'string' || row.id === '') fail(`records.${name}[${i}] must be an object with a string id`);
    });
  }
  if (!Array.isArray(v.links)) fail('"links" must be an array');
  (v.links as unknown[]).forEach((link, i) => {
    const ok =
      isPlainObject(link) &&
      ['id', 'parent_id', 'relation', 'child_id', 'created_at'].every((f) => typeof link[f] === 'string') &&
      typeof link.parent_type === 'string' &&
      isResourceName(link.parent_type) &&
      typeof link.child_type === 'string' &&
      isResourceName(link.child_type);
    if (!ok) fail(`links[${i}] is not a valid link`);
  });
  if (v.idempotency !== undefined) {
    if (!Array.isArray(v.idempotency)) fail('"idempotency" must be an array');
    (v.idempotency as unknown[]).forEach((e, i) => {
      const ok =
        isPlainObject(e) &&
        ['api_key_sha256', 'key', 'fingerprint'].every((f) => typeof e[f] === 'string') &&
        typeof e.stored_at === 'number' &&
        Number.isFinite(e.stored_at) &&
        isPlainObject(e.response) &&
        Number.isInteger(e.response.status) &&
        isPlainObject(e.response.headers) &&
        Object.values(e.response.headers).every((h) => typeof h === 'string') &&
        (e.response.raw === undefined || typeof e.response.raw === 'string');
      if (!ok) fail(`idempotency[${i}] is not a valid idempotency entry`);
    });
  }
  return value as DataFile;
}

/** Writes F atomically: a temporary file in the same folder, fsynced, renamed over F. */
export async function saveDataFile(path: string, snapshot: DataFile): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(JSON.stringify(snapshot));
    await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(tmp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(tmp, path);
}

/** Saves `delayMs` after the first unsaved change, one save at a time; `flush` saves now, `close` for the last time. */
export class AutoSaver {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private dirty = false;
  private chain: Promise<void> = Promise.resolve();
  /** the last save error, reported on flush */
  lastError: Error | undefined;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => DataFile,
    private readonly delayMs: number,
  ) {}

  changed(): void {
    if (this.closed) return;
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.save().catch(() => {});
    }, this.delayMs);
    this.timer.unref();
  }

  /** Saves now (if anything changed since the last save) and stops the timer. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.save(true);
  }

  /**
   * The last save, at close. A request still running when its connection was cut may write after
   * it; its answer never reached anyone, so it is not saved (a later save of this process could
   * otherwise land on the file after a new sandbox had loaded it).
   */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }

  private save(always = false): Promise<void> {
    this.chain = this.chain
      .catch(() => {})
      .then(async () => {
        if (!this.dirty && !always) return;
        this.dirty = false;
        try {
          await saveDataFile(this.path, this.snapshot());
          this.lastError = undefined;
        } catch (err) {
          this.dirty = true;
          this.lastError = err as Error;
          throw err;
        }
      });
    return this.chain;
  }
}
