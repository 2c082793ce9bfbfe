// `crm snapshot DIR` (issue 19): each collection is read page by page (client.pages, 100 a page,
// paced by the client's pacer) into DIR/.<name>.ndjson.partial; after each page's lines are on disk
// (fsync) DIR/.<name>.ndjson.state records the page's end cursor and the file's length then. A rerun
// cuts the partial file back to that length and goes on from that cursor, so no record is written
// twice; a finished collection is renamed to DIR/<name>.ndjson and skipped by later runs. The
// manifest says `complete: true` only once every collection is finished.
import { open, readFile, rename, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import { RESOURCES, PAGE_SIZE_MAX, type ResourceName } from '../../api/resources.js';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { stringifyJson } from '../../json/exact-json.js';
import { createProgress } from '../../output/progress.js';
import { plural } from '../../output/plural.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { ensureDir, exists, removeStaleTemps } from '../../util/fs.js';
import { countLines } from '../../util/lines.js';
import type { HttpClient } from '../../http/types.js';
import type { Ctx } from '../context.js';
import type { SnapshotOptions } from './command.js';
import {
  checkTranscriptsOption,
  snapshotTranscripts,
  takenOut,
  transcriptsFailure,
  transcriptsSaid,
  type TranscriptsEntry,
} from './transcripts.js';

/** every collection that can be listed, in the resource table's order */
export const SNAPSHOT_RESOURCES: readonly ResourceName[] = RESOURCES.filter((r) => r.verbs.includes('list')).map((r) => r.name);

/** What is never in a snapshot yet, and why (the manifest's `left_out`). */
const NOT_YET = [
  { what: 'links', reason: 'links (deals/{id}/contacts …) are not part of a snapshot yet' },
  { what: 'transcripts', reason: 'transcripts are not part of a snapshot yet (crm recordings download)' },
];

export interface Manifest {
  base_url: string;
  started_at: string;
  finished_at: string | null;
  complete: boolean;
  collections: Record<string, { file: string; records: number; complete: boolean }>;
  left_out: Array<{ what: string; reason: string }>;
  /** with --transcripts (transcripts.ts) */
  transcripts?: TranscriptsEntry;
}

/** Where a collection's partial file stands: its cursor and the bytes and records written before it. */
interface PartialState {
  cursor: string;
  bytes: number;
  records: number;
}

/** `--resources a,b`: known names that can be listed, each once; default every one. */
export function parseResources(value: string | undefined): ResourceName[] {
  if (value === undefined) return [...SNAPSHOT_RESOURCES];
  const names = value.split(',').map((s) => s.trim());
  const wrong = names.filter((n) => !(SNAPSHOT_RESOURCES as readonly string[]).includes(n));
  if (names.length === 0 || names.every((n) => n === '') || wrong.length > 0) {
    const shown =
      wrong
        .filter(Boolean)
        .map((n) => JSON.stringify(n))
        .join(', ') || JSON.stringify(value);
    throw new UsageError(`--resources: unknown collection ${shown}; choose from ${SNAPSHOT_RESOURCES.join(', ')}`);
  }
  return SNAPSHOT_RESOURCES.filter((n) => names.includes(n));
}

export async function runSnapshot(opts: SnapshotOptions, ctx: Ctx): Promise<void> {
  if (opts.dir.trim() === '') throw new UsageError('DIR must name a folder');
  const chosen = parseResources(opts.resources);
  checkTranscriptsOption(opts.transcripts, chosen);
  const client = await ctx.client();
  const dir = path.resolve(opts.dir);
  const manifestPath = path.join(dir, 'manifest.json');
  const { manifest, earlier } = await startManifest(opts.dir, manifestPath, chosen, client.baseUrl, ctx.clock.now());
  manifest.left_out = takenOut(manifest.left_out, opts.transcripts);
  const save = () => writeFileAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`, 0o600);
  await save();

  const progress = createProgress({
    stream: ctx.io.stderr,
    enabled: Boolean(ctx.io.stderr.isTTY) && !ctx.globals.quiet,
    text: 'Snapshot…',
    color: ctx.globals.stderrColor,
  });
  try {
    for (const [i, name] of chosen.entries()) {
      const show = (records: number) => progress.update(`Snapshot ${i + 1}/${chosen.length}: ${name} ${plural(records, 'record')}`);
      const records = await snapshotCollection(dir, name, earlier, { pages: (p, o) => client.pages(p, o), signal: ctx.signal, show });
      manifest.collections[name] = { file: `${name}.ndjson`, records, complete: true };
      await save();
    }
    if (opts.transcripts) await snapshotTranscripts({ dir, client, ctx, manifest, save, progress });
  } catch (err) {
    if (ctx.signal.aborted) {
      throw new InterruptedError(`interrupted: run the same command again to resume the snapshot in ${sanitizeForTerminal(opts.dir)}`, {
        cause: err,
      });
    }
    throw err;
  } finally {
    await progress.stop();
  }
  // complete only when the transcripts taken are too (a failed one: a rerun retries it)
  manifest.complete = manifest.transcripts?.complete ?? true;
  if (manifest.complete) manifest.finished_at = new Date(ctx.clock.now()).toISOString();
  await save();

  const total = Object.values(manifest.collections).reduce((sum, c) => sum + c.records, 0);
  const format = ctx.format();
  if (format === 'json' || format === 'ndjson') ctx.io.stdout.write(`${safeJson(manifest)}\n`);
  else if (manifest.complete) {
    const also = transcriptsSaid(manifest.transcripts);
    ctx.warn(
      `Snapshot complete: ${plural(total, 'record')} in ${plural(chosen.length, 'collection')}${also}, in ${sanitizeForTerminal(opts.dir)}`,
    );
  }
  const failed = transcriptsFailure(manifest.transcripts);
  if (failed) throw failed;
}

/** Makes DIR, clears what a killed run left, and starts the manifest (the earlier run's start kept). */
async function startManifest(shown: string, manifestPath: string, chosen: ResourceName[], baseUrl: string, now: number) {
  const dir = path.dirname(manifestPath);
  try {
    ensureDir(dir);
  } catch (err) {
    throw new UsageError(`cannot make ${sanitizeForTerminal(shown)}: ${(err as Error).message}`, { cause: err });
  }
  // what a run killed while replacing the manifest or a cursor state left behind
  await removeStaleTemps(dir, now, (name) => name === 'manifest.json' || /^\.\w+\.ndjson\.state$/.test(name));
  const earlier = await readManifest(manifestPath);
  if (earlier && earlier.base_url !== baseUrl) {
    throw new UsageError(
      `${sanitizeForTerminal(shown)} holds a snapshot of ${sanitizeForTerminal(earlier.base_url)}, not ${sanitizeForTerminal(baseUrl)}; choose another folder`,
    );
  }
  const manifest: Manifest = {
    base_url: baseUrl,
    started_at: earlier?.started_at ?? new Date(now).toISOString(),
    finished_at: null,
    complete: false,
    collections: {},
    left_out: [...SNAPSHOT_RESOURCES.filter((n) => !chosen.includes(n)).map((what) => ({ what, reason: 'not in --resources' })), ...NOT_YET],
  };
  return { manifest, earlier };
}

interface CollectionDeps {
  pages: HttpClient['pages'];
  signal: AbortSignal;
  show(records: number): void;
}

/** One collection into DIR/<name>.ndjson (resuming its partial file); returns its record count. */
async function snapshotCollection(dir: string, name: ResourceName, earlier: Manifest | undefined, deps: CollectionDeps): Promise<number> {
  const final = path.join(dir, `${name}.ndjson`);
  const partial = path.join(dir, `.${name}.ndjson.partial`);
  const statePath = path.join(dir, `.${name}.ndjson.state`);
  if (await exists(final)) {
    await rm(statePath, { force: true }); // a run killed between the rename and this
    const known = earlier?.collections[name];
    return known?.complete ? known.records : countLines(await readFile(final));
  }
  // without its partial file a saved cursor is worth nothing: the collection starts again
  const state = (await exists(partial)) ? await readState(statePath) : undefined;
  // lines after the last saved cursor (a page written but not recorded) go: that page is read again
  if (await exists(partial)) await truncate(partial, state?.bytes ?? 0);
  let bytes = state?.bytes ?? 0;
  let records = state?.records ?? 0;
  deps.show(records);
  const file = await open(partial, 'a', 0o600);
  try {
    for await (const page of deps.pages(`/${name}`, { limit: PAGE_SIZE_MAX, cursor: state?.cursor, signal: deps.signal })) {
      const text = page.data.map((r) => `${stringifyJson(r)}\n`).join('');
      const buf = Buffer.from(text, 'utf8');
      await file.write(buf);
      await file.sync();
      bytes += buf.length;
      records += page.data.length;
      if (page.hasNextPage && page.endCursor) {
        const next: PartialState = { cursor: page.endCursor, bytes, records };
        await writeFileAtomic(statePath, `${JSON.stringify(next)}\n`, 0o600);
      }
      deps.show(records);
    }
  } finally {
    await file.close();
  }
  await rename(partial, final);
  await rm(statePath, { force: true });
  return records;
}

async function readState(file: string): Promise<PartialState | undefined> {
  const parsed = await readJson(file);
  if (!parsed || typeof parsed !== 'object') return undefined;
  const s = parsed as Partial<PartialState>;
  if (typeof s.cursor !== 'string' || !Number.isInteger(s.bytes) || !Number.isInteger(s.records)) return undefined;
  return s as PartialState;
}

async function readManifest(file: string): Promise<Manifest | undefined> {
  const parsed = await readJson(file);
  return parsed && typeof parsed === 'object' && typeof (parsed as Manifest).base_url === 'string' ? (parsed as Manifest) : undefined;
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}
