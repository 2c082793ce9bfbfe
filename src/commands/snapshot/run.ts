// `crm snapshot DIR` (issue 19): each collection is read page by page (client.pages, 100 a page,
// paced by the client's pacer) into DIR/<name>.ndjson through a resumable partial file (paged-file.ts:
// a rerun cuts it back to the last page recorded and goes on from that cursor, so no record is written
// twice, nor a record a server paging by position serves again: written-ids.ts); then, with --links,
// each parent's links (links.ts). The run is a list of parts, one call each; the manifest says
// `complete: true` only once every part is finished, and lists what the folder holds (an earlier run's
// finished parts included). One run writes a folder at a time (its lock); a full disk is exit 8 with
// the command that resumes.
import path from 'node:path';
import { RESOURCES, PAGE_SIZE_MAX, type ResourceName } from '../../api/resources.js';
import { DiskError, InterruptedError, UsageError } from '../../http/errors.js';
import { unwritable } from '../../import/files/outputs.js';
import { createProgress, type Progress } from '../../output/progress.js';
import { plural } from '../../output/plural.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { ensureDir, exists, removeStaleTemps } from '../../util/fs.js';
import { takeProcessLock } from '../../util/process-lock.js';
import { countTextLines } from '../../util/text-lines.js';
import { readFile } from 'node:fs/promises';
import { LINK_KINDS, LINKS_DIR, type LinkKind } from '../../api/snapshot-links.js';
import type { Ctx } from '../context.js';
import { shellWord } from '../shared/command-line.js';
import type { SnapshotOptions } from './command.js';
import type { Manifest, SnapshotRun } from './types.js';
import { linkKindsFor, linksAskText, snapshotLinks } from './links.js';
import { refusedCursor, STATE_NAME, writePaged, writing } from './paged-file.js';
import { waitText } from './progress-text.js';
import { checkTranscriptsOption, snapshotTranscripts, transcriptsFailure, transcriptsSaid } from './transcripts.js';
import { WrittenIds } from './written-ids.js';

/** every collection that can be listed, in the resource table's order */
export const SNAPSHOT_RESOURCES: readonly ResourceName[] = RESOURCES.filter((r) => r.verbs.includes('list')).map(
  (r) => r.name,
);

/** What a snapshot leaves out unless asked, and why (the manifest's `left_out`). */
const LINKS_LEFT_OUT = {
  what: 'links',
  reason: 'links (deals/{id}/contacts …) and meeting associations cost a request per parent: add --links',
};
const TRANSCRIPTS_LEFT_OUT = {
  what: 'transcripts',
  reason: 'transcripts cost two requests each (a GET and the download): add --transcripts',
};

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
  const links = opts.links ? linkKindsFor(chosen) : undefined;
  checkTranscriptsOption(opts.transcripts, chosen);
  const client = await ctx.client();
  const dir = path.resolve(opts.dir);
  makeDir(dir, opts.dir);
  // one run writes a folder at a time: two at once appended each page twice to the same files
  const lock = path.join(dir, LOCK_NAME);
  let release: (() => Promise<void>) | undefined;
  try {
    release = await takeProcessLock(lock, (pid) => writingElsewhere(opts.dir, pid, lock));
    await snapshotLocked(opts, ctx, { dir, client, chosen, links: links?.taken });
  } catch (err) {
    if (ctx.signal.aborted) {
      throw new InterruptedError(
        `interrupted: run the same command again to resume the snapshot in ${sanitizeForTerminal(opts.dir)}`,
        { cause: err },
      );
    }
    throw await onFullDisk(err, dir, opts);
  } finally {
    await release?.();
  }
}

/** The snapshot, its folder locked. */
async function snapshotLocked(
  opts: SnapshotOptions,
  ctx: Ctx,
  { dir, client, chosen, links }: Pick<SnapshotRun, 'dir' | 'client'> & Pick<Asked, 'chosen' | 'links'>,
): Promise<void> {
  const manifestPath = path.join(dir, 'manifest.json');
  const { manifest, earlier } = await startManifest(opts.dir, manifestPath, {
    chosen,
    links,
    transcripts: opts.transcripts === true,
    baseUrl: client.baseUrl,
    now: ctx.clock.now(),
  });
  if (earlier && holdsAll(earlier, chosen, links, opts.transcripts)) {
    // a finished snapshot is never refreshed in place: its files would mix two times
    ctx.warn(
      `${sanitizeForTerminal(opts.dir)} already holds a complete snapshot (taken from ${earlier.started_at} to ${earlier.finished_at ?? '?'}): nothing read. A fresh snapshot needs another folder (or this one removed first).`,
    );
    return report(ctx, { ...earlier }, opts.dir, false);
  }
  const save = () =>
    writing(manifestPath, () => writeFileAtomic(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`, 0o600));
  await save();
  ctx.warn(
    [planText(opts.dir, chosen, links && linksAskText(links), opts.transcripts), ...keptText(earlier)].join('\n'),
  );

  const withProgress = async <T>(f: (progress: Progress) => Promise<T>): Promise<T> => {
    const progress = createProgress({
      stream: ctx.io.stderr,
      enabled: Boolean(ctx.io.stderr.isTTY) && !ctx.globals.quiet,
      text: 'Snapshot…',
      color: ctx.globals.stderrColor,
    });
    try {
      return await f(progress);
    } finally {
      await progress.stop();
    }
  };
  const run: SnapshotRun = { dir, client, ctx, manifest, earlier, save, withProgress };
  // the parts, one call each, in order (the links and the transcripts read the collections' files)
  const parts: Array<() => Promise<void>> = [
    () => snapshotCollections(run, chosen),
    ...(links ? [() => snapshotLinks(run, links)] : []),
    ...(opts.transcripts ? [() => withProgress((progress) => snapshotTranscripts({ ...run, progress }))] : []),
  ];
  for (const part of parts) await part();
  // complete only when the transcripts taken are too (a failed one: a rerun retries it)
  manifest.complete = manifest.transcripts?.complete ?? true;
  if (manifest.complete) manifest.finished_at = new Date(ctx.clock.now()).toISOString();
  await save();

  report(ctx, manifest, opts.dir);
}

/** the lock file in DIR (src/util/process-lock.ts) */
const LOCK_NAME = '.snapshot.lock';

/** Another run holds the folder: exit 2, nothing written, naming it. */
function writingElsewhere(shown: string, pid: number | undefined, lock: string): UsageError {
  const who = pid !== undefined ? `another crm (process ${pid})` : 'another crm';
  return new UsageError(
    `${who} is writing a snapshot into ${sanitizeForTerminal(shown)} right now; nothing was written`,
    {
      hint: `let it finish (or stop it), then run this command again: it goes on from what is saved. Lock: ${sanitizeForTerminal(lock)}`,
    },
  );
}

/**
 * A full (or failing) disk: a DiskError (exit 8) naming the file that could not be written and its folder's
 * free space, with the command that resumes once there is room; any other error as it is.
 */
async function onFullDisk(err: unknown, dir: string, opts: SnapshotOptions): Promise<unknown> {
  const named = (err as { path?: unknown } | null)?.path;
  const disk = await unwritable(
    err,
    typeof named === 'string' ? named : dir,
    'the snapshot file',
    'what was saved before it is kept',
  );
  if (!(disk instanceof DiskError)) return err;
  const again = ['crm', ...(opts.argv ?? ['snapshot', opts.dir])].map(shellWord).join(' ');
  return new DiskError(disk.message, {
    code: disk.code,
    cause: err,
    hint: `free some space (or choose a folder on another disk), then run the same command to resume: ${again}`,
  });
}

/** Makes DIR (and its missing parents): a usage error when it cannot be made. */
function makeDir(dir: string, shown: string): void {
  try {
    ensureDir(dir);
  } catch (err) {
    throw new UsageError(`cannot make ${sanitizeForTerminal(shown)}: ${(err as Error).message}`, { cause: err });
  }
}

/** Does the earlier snapshot in DIR hold, complete, everything asked (nothing to read)? */
function holdsAll(
  earlier: Manifest,
  chosen: readonly ResourceName[],
  links: readonly LinkKind[] | undefined,
  transcripts: boolean | undefined,
): boolean {
  return (
    earlier.complete &&
    chosen.every((n) => earlier.collections[n]?.complete) &&
    (links ?? []).every((k) => earlier.links?.[k.key]?.complete) &&
    (!transcripts || earlier.transcripts?.complete === true)
  );
}

/** With an earlier run's folder: what it saved is kept as it was, and said so. */
function keptText(earlier: Manifest | undefined): string[] {
  const done = Object.entries(earlier?.collections ?? {}).filter(([, c]) => c.complete);
  if (!earlier) return [];
  if (done.length === 0) return [`resuming the snapshot begun ${earlier.started_at}`];
  const records = done.reduce((sum, [, c]) => sum + c.records, 0);
  const how = earlier.complete ? 'adding to the complete snapshot' : 'resuming the snapshot';
  return [
    `${how} begun ${earlier.started_at}: ${done.map(([n]) => n).join(', ')} (${plural(records, 'record')}) already saved, kept as they were`,
  ];
}

/** The manifest on stdout (json, ndjson), or one line on stderr (`said`: unless already said); exit 9 when transcripts failed. */
function report(ctx: Ctx, manifest: Manifest, shown: string, said = true): void {
  const format = ctx.format();
  if (format === 'json' || format === 'ndjson') ctx.io.stdout.write(`${safeJson(manifest)}\n`);
  else if (manifest.complete && said) {
    const collections = Object.values(manifest.collections);
    const total = collections.reduce((sum, c) => sum + c.records, 0);
    const linked = Object.values(manifest.links ?? {}).reduce((sum, c) => sum + c.records, 0);
    const also = `${manifest.links ? ` and ${plural(linked, 'link')}` : ''}${transcriptsSaid(manifest.transcripts)}`;
    ctx.warn(
      `Snapshot complete: ${plural(total, 'record')} in ${plural(collections.length, 'collection')}${also}, in ${sanitizeForTerminal(shown)}`,
    );
  }
  const failed = transcriptsFailure(manifest.transcripts);
  if (failed) throw failed;
}

/** The plan, before anything is read: what the snapshot will do. */
function planText(
  shown: string,
  chosen: readonly ResourceName[],
  links: string | undefined,
  transcripts: boolean | undefined,
): string {
  const what = chosen.length === SNAPSHOT_RESOURCES.length ? 'every collection' : chosen.join(', ');
  const lines = [
    `Snapshot of ${what} (${plural(chosen.length, 'collection')}) into ${shown}: a request per ${PAGE_SIZE_MAX} records (the API gives no count: no ETA)`,
  ];
  if (links) lines.push(`then the links: ${links}; their cost is said once those are counted`);
  if (transcripts)
    lines.push('then the transcripts: a GET and a download for each recording with one (an ETA once they are counted)');
  return lines.join('\n');
}

/** Every chosen collection in turn; the manifest's entry for each once it is finished. */
async function snapshotCollections(run: SnapshotRun, chosen: readonly ResourceName[]): Promise<void> {
  const { dir, client, ctx, manifest } = run;
  await run.withProgress(async (progress) => {
    for (const [i, name] of chosen.entries()) {
      let pages = 0;
      const show = (records: number) => {
        const waitMs = (client.pace?.().waitingUntil ?? 0) - ctx.clock.now();
        progress.update(
          `Snapshot ${i + 1}/${chosen.length}: ${name} ${plural(records, 'record')}, ${plural(pages, 'page')}${waitText(waitMs)}`,
        );
      };
      const { records, forget } = await writePaged(dir, `${name}.ndjson`, validCursor, async (w) => {
        const cursor = w.resume?.at.cursor;
        if (cursor === null) return; // its last page is in the file
        if (cursor !== undefined)
          ctx.warn(`${name}: ${plural(w.records, 'record')} already saved by the earlier run; reading on from there`);
        show(w.records);
        // the records in the file already (an earlier run's pages): a record served again is not written again
        const ids = await WrittenIds.of(w.partial);
        const read = async (from: string | undefined) => {
          for await (const page of client.pages(`/${name}`, {
            limit: PAGE_SIZE_MAX,
            cursor: from,
            signal: ctx.signal,
          })) {
            const { text, count } = ids.fresh(page.data, w.bytes);
            await w.page(text, count, {
              cursor: page.hasNextPage && page.endCursor ? page.endCursor : null,
            });
            pages++;
            show(w.records);
          }
        };
        try {
          await read(cursor);
        } catch (err) {
          if (cursor === undefined || pages > 0 || !refusedCursor(err)) throw err;
          ctx.warn(
            `${name}: the server refused the cursor the earlier run saved (${sanitizeForTerminal((err as Error).message)}): reading ${name} again from its start`,
          );
          await w.restart();
          ids.clear();
          await read(undefined);
        } finally {
          await ids.close();
        }
      });
      const known = run.earlier?.collections[name];
      const counted =
        records ?? (known?.complete ? known.records : await countTextLines(path.join(dir, `${name}.ndjson`)));
      manifest.collections[name] = { file: `${name}.ndjson`, records: counted, complete: true };
      await run.save();
      await forget();
    }
  });
}

/** A collection's position: the cursor after the last page written; null once its last page is. */
const validCursor = (at: unknown): at is { cursor: string | null } => {
  const c = (at as { cursor?: unknown } | null)?.cursor;
  return typeof at === 'object' && at !== null && (c === null || typeof c === 'string');
};

/** What an earlier run finished that this one keeps: the manifest's entries as they were. */
type Kept = Pick<Manifest, 'collections' | 'transcripts'> & { links: NonNullable<Manifest['links']> };

/** What this run is asked for. */
interface Asked {
  chosen: readonly ResourceName[];
  /** the kinds of links taken (--links) */
  links: readonly LinkKind[] | undefined;
  transcripts: boolean;
  baseUrl: string;
  now: number;
}

/** Clears what a killed run left in DIR and starts the manifest (the earlier run's start and finished parts kept). */
async function startManifest(shown: string, manifestPath: string, asked: Asked) {
  const dir = path.dirname(manifestPath);
  // what a run killed while replacing the manifest or a cursor state left behind
  const owned = (name: string) => name === 'manifest.json' || STATE_NAME.test(name);
  await removeStaleTemps(dir, asked.now, owned);
  await removeStaleTemps(path.join(dir, LINKS_DIR), asked.now, owned);
  const earlier = await readManifest(manifestPath);
  if (earlier && earlier.base_url !== asked.baseUrl) {
    throw new UsageError(
      `${sanitizeForTerminal(shown)} holds a snapshot of ${sanitizeForTerminal(earlier.base_url)}, not ${sanitizeForTerminal(asked.baseUrl)}; choose another folder`,
    );
  }
  const kept = await keptParts(dir, earlier, asked);
  const manifest: Manifest = {
    base_url: asked.baseUrl,
    started_at: earlier?.started_at ?? new Date(asked.now).toISOString(),
    finished_at: null,
    complete: false,
    collections: kept.collections,
    ...(Object.keys(kept.links).length > 0 ? { links: kept.links } : {}),
    ...(kept.transcripts ? { transcripts: kept.transcripts } : {}),
    left_out: leftOutOf(asked, kept),
  };
  return { manifest, earlier };
}

/**
 * The parts an earlier run finished that this one does not read again (not asked, or finished): the folder
 * holds them, so the manifest lists them as they were (never as left out). A file since removed is not kept.
 */
async function keptParts(
  dir: string,
  earlier: Manifest | undefined,
  asked: Pick<Asked, 'chosen' | 'links' | 'transcripts'>,
): Promise<Kept> {
  const finished = async <E extends { file: string; complete: boolean }>(
    entries: Record<string, E> | undefined,
    again: (key: string) => boolean,
  ) => {
    const out: Record<string, E> = {};
    for (const [key, e] of Object.entries(entries ?? {}))
      if (e.complete && !again(key) && (await exists(path.join(dir, e.file)))) out[key] = e;
    return out;
  };
  return {
    collections: await finished(earlier?.collections, (n) => asked.chosen.includes(n as ResourceName)),
    links: await finished(earlier?.links, (k) => (asked.links ?? []).some((kind) => kind.key === k)),
    transcripts: !asked.transcripts && earlier?.transcripts?.complete ? earlier.transcripts : undefined,
  };
}

/** What the folder will not hold, and why: the manifest's `left_out` (what an earlier run finished is held). */
function leftOutOf(asked: Pick<Asked, 'chosen' | 'links' | 'transcripts'>, kept: Kept): Manifest['left_out'] {
  const collections = new Set<string>([...asked.chosen, ...Object.keys(kept.collections)]);
  const links = new Set([...(asked.links ?? []).map((k) => k.key), ...Object.keys(kept.links)]);
  const missing = LINK_KINDS.filter((k) => !links.has(k.key));
  const linksLeft =
    !asked.links && missing.length === LINK_KINDS.length
      ? [LINKS_LEFT_OUT]
      : missing.map((k) => ({
          what: k.key,
          reason:
            !asked.links && collections.has(k.parent)
              ? LINKS_LEFT_OUT.reason
              : `links of ${k.parent}, which are not in --resources`,
        }));
  return [
    ...SNAPSHOT_RESOURCES.filter((n) => !collections.has(n)).map((what) => ({ what, reason: 'not in --resources' })),
    ...linksLeft,
    ...(asked.transcripts || kept.transcripts ? [] : [TRANSCRIPTS_LEFT_OUT]),
  ];
}

async function readManifest(file: string): Promise<Manifest | undefined> {
  const parsed = await readJson(file);
  return parsed && typeof parsed === 'object' && typeof (parsed as Manifest).base_url === 'string'
    ? (parsed as Manifest)
    : undefined;
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}
