// `--data-file F` (docs/sandbox.md, "Seed and data file"): load the store at start, save it
// atomically (F.tmp-PID, fsync, rename) on close and a few seconds after a change.
import { readFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { isResourceName } from '../api/resources.js';
import type { StoreSnapshot } from './store.js';
import { isPlainObject } from './validation.js';

/** The snapshot in F, undefined when F does not exist; throws an Error naming F when malformed. */
export function loadDataFile(path: string): StoreSnapshot | undefined {
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

export function validateSnapshot(value: unknown, where: string): StoreSnapshot {
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
  return value as unknown as StoreSnapshot;
}

/** Writes F atomically: a temporary file in the same folder, fsynced, renamed over F. */
export async function saveDataFile(path: string, snapshot: StoreSnapshot): Promise<void> {
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

/** Saves a few seconds after the last change, one save at a time; `flush` saves now. */
export class AutoSaver {
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private chain: Promise<void> = Promise.resolve();
  /** the last save error, reported on flush */
  lastError: Error | undefined;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => StoreSnapshot,
    private readonly delayMs: number,
  ) {}

  changed(): void {
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

  private save(always = false): Promise<void> {
    this.chain = this.chain.catch(() => {}).then(async () => {
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
