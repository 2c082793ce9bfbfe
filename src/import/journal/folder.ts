// The journal folder beyond one run's journal: each job's lock, old journals pruned, and the earlier imports that
// make this one unsafe.
import { open, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../../http/errors.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import { exists, isStaleLeftover, listDir } from '../../util/fs.js';
import { streamLines } from '../../util/lines.js';
import { takeProcessLock } from '../../util/process-lock.js';
import { NO_RESULT_CODE, trimBase, type FinishedChunk, type JournalIdentity } from '../shapes.js';
import { jobOf, journalPath, jsonLine, parseLine, readComplete, readHeader } from './journal.js';

// The lock: one run of a job at a time (issue 17): two runs of one file at once both sent every row and each reported
// the other's as done by an earlier run. The job's lock is a file beside its journal naming the process that has
// it (util/process-lock.ts: taken over when that process is gone, even when a later one has its pid).

/** The lock of a job: per content, resource, base URL and operation (not the key or options: those runs clash too). */
function lockPath(dir: string, identity: JournalIdentity): string {
  return `${journalPath(dir, { ...identity, keyId: undefined, options: undefined })}.lock`;
}

/**
 * Takes the job's lock, or refuses (exit 2, nothing sent) naming the run that has it; the returned function
 * releases it (and so does the process's exit).
 */
export async function lockJob(dir: string, identity: JournalIdentity, name: string): Promise<() => Promise<void>> {
  const path = lockPath(dir, identity);
  return takeProcessLock(path, (pid) => running(name, identity, pid, path));
}

function running(name: string, identity: JournalIdentity, pid: number | undefined, path: string): UsageError {
  const who = pid === undefined ? 'another crm' : `another crm (process ${pid})`;
  return new UsageError(`${who} is running this same job (${name} ${jobOf(identity)}) right now; nothing was sent`, {
    hint: `let it finish (or stop it), then run this command again: it sends only what is left. Lock: ${path}`,
  });
}

// Pruning: finished journals compacted (header + `complete`) after a week or beyond 32 MiB, compacted ones gone after
// a year, unfinished after 30 days, dead processes' leftovers after a day. `keep` is never touched.
const DAY = 86_400_000;

export interface PruneOptions {
  /** beyond this total, the oldest finished journals are compacted first (default 32 MiB) */
  maxTotalBytes?: number;
  keep?: string;
}

/** Cut a finished journal down to its header and `complete` line; its new size, or -1 when it was not. */
async function compact(path: string): Promise<number> {
  const header = await readHeader(path);
  const done = await readComplete(path);
  if (!header || !done || done.compacted) return -1;
  await writeFileAtomic(path, jsonLine(header) + jsonLine({ type: 'complete', ...done, compacted: true }));
  return (await stat(path)).size;
}

export const compactJournal = async (path: string): Promise<boolean> => (await compact(path)) >= 0;

interface Journal {
  path: string;
  size: number;
  mtimeMs: number;
}

/** Returns how many files were removed or compacted. */
export async function pruneJournals(dir: string, now: number, opts: PruneOptions = {}): Promise<number> {
  let changed = 0;
  let total = 0;
  const finished: Journal[] = [];
  const gone = (path: string): Promise<boolean> =>
    unlink(path)
      .then(() => ++changed > 0)
      .catch(() => false);
  const shrink = async (j: Journal): Promise<void> => {
    const size = await compact(j.path).catch(() => -1);
    if (size >= 0) changed++;
    total += size >= 0 ? size - j.size : 0;
  };
  for (const name of await listDir(dir)) {
    const path = join(dir, name);
    const st = await stat(path).catch(() => undefined);
    if (!st || path === opts.keep) {
      total += st?.size ?? 0;
      continue;
    }
    const age = now - st.mtimeMs;
    if (/^stdin-\d+-[0-9a-f]+\.buf$|\.tmp-\d+-[0-9a-f]+$/.test(name)) {
      if (isStaleLeftover(name, age)) await gone(path);
      continue;
    }
    // reconcile's plan (pinned by journal/stage.ts) is kept beside an unfinished journal only
    if (name.endsWith('.jsonl.plan') || name.endsWith('.jsonl.plan.next')) {
      const journal = path.slice(0, path.lastIndexOf('.jsonl') + '.jsonl'.length);
      if (journal !== opts.keep && (!(await exists(journal)) || (await readComplete(journal)))) await gone(path);
      continue;
    }
    if (!name.endsWith('.jsonl')) continue;
    const done = await readComplete(path);
    const j = { path, size: st.size, mtimeMs: st.mtimeMs };
    const old = done ? done.compacted && age > 365 * DAY : age > 30 * DAY;
    if (old && (await gone(path))) continue;
    total += st.size;
    if (done && !done.compacted && age > 7 * DAY) await shrink(j);
    else if (done && !done.compacted) finished.push(j);
  }
  for (const j of finished.sort((a, b) => a.mtimeMs - b.mtimeMs)) {
    if (total <= (opts.maxTotalBytes ?? 32 * 1024 * 1024)) break;
    await shrink(j);
  }
  return changed;
}

// Earlier imports that make this one unsafe, from the journals' headers: the same path with other content
// (other chunks, other keys) or the same content under another API key (keys are cached per key).
interface EarlierImport {
  path: string;
  kind: 'changed' | 'other-key' | 'other-options';
  createdAt: string;
  /** the earlier import's key, masked, when its journal recorded it */
  keyMask?: string;
  complete: boolean;
}

/** Journals of this resource and base URL: same path other content (`changed`, not stdin), or same content other key; only those that may have created rows. */
async function findEarlierImports(dir: string, match: JournalIdentity & { input: string }): Promise<EarlierImport[]> {
  const out: EarlierImport[] = [];
  for (const name of (await listDir(dir)).filter((n) => n.endsWith('.jsonl'))) {
    const path = join(dir, name);
    const h = await readHeader(path);
    if (
      !h ||
      h.resource !== match.resource ||
      h.operation !== match.operation ||
      trimBase(h.base_url) !== trimBase(match.baseUrl)
    )
      continue;
    const changed = match.input !== '-' && h.input === match.input && h.content_sha256 !== match.contentSha256;
    const otherKey =
      h.content_sha256 === match.contentSha256 &&
      match.keyId !== undefined &&
      h.key_id !== undefined &&
      h.key_id !== match.keyId;
    // the same content and key run with another --map, --chunk-size, …: another job over the same rows
    const otherOptions =
      h.content_sha256 === match.contentSha256 && !otherKey && (h.options ?? '') !== (match.options ?? '');
    if (!changed && !otherKey && !otherOptions) continue;
    const complete = await readComplete(path);
    const created = complete?.compacted
      ? (complete.created ?? 1) > 0 || (complete.unknown ?? 0) > 0
      : await mayHaveCreated(path).catch(() => true);
    if (!created) continue;
    const keyMask = h.key_mask ? { keyMask: h.key_mask } : {};
    out.push({
      path,
      kind: changed ? 'changed' : otherKey ? 'other-key' : 'other-options',
      createdAt: h.created_at,
      ...keyMask,
      complete: complete !== undefined,
    });
  }
  return out;
}

/** A finished chunk with a row not rejected, or a chunk sent with no answer nor `unsent` after it. */
async function mayHaveCreated(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    let created = false;
    const pending = new Set<number>();
    await streamLines(fh, (text, offset) => {
      const v = offset === 0 || created ? undefined : parseLine(text);
      const seq = v?.seq as number;
      if (v?.type === 'sent') pending.add(seq);
      else if (v?.type === 'unsent') pending.delete(seq);
      else if (v?.type === 'chunk') {
        pending.delete(seq);
        const c = v as unknown as FinishedChunk;
        created = c.lines.length > c.rejects.filter((r) => r.code !== NO_RESULT_CODE).length;
      }
    });
    return created || pending.size > 0;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * The rejects file of this job was imported since (a journal of that file, same job, that may have done
 * rows): its rows must not be sent again by a rerun of the original, or they would be done twice.
 */
export async function rejectsTakenUp(dir: string, identity: JournalIdentity, rejectsPath: string): Promise<boolean> {
  for (const name of (await listDir(dir)).filter((n) => n.endsWith('.jsonl'))) {
    const path = join(dir, name);
    const h = await readHeader(path);
    if (!h || h.input !== rejectsPath || h.resource !== identity.resource || h.operation !== identity.operation)
      continue;
    if (trimBase(h.base_url) !== trimBase(identity.baseUrl)) continue;
    const complete = await readComplete(path);
    if (complete?.compacted ? (complete.created ?? 1) > 0 : await mayHaveCreated(path).catch(() => true)) return true;
  }
  return false;
}

export interface GuardContext {
  dir: string;
  identity: JournalIdentity;
  /** absolute input path, or `-` for stdin */
  input: string;
  /** the input's name as the user gave it */
  name: string;
  /** the rejects file this run would write (named in the changed-file hint) */
  rejectsPath: string;
  resume: boolean;
  /** this identity has a journal of its own: resuming it is safe */
  hasOwnJournal: boolean;
}

/** Refuses (exit 2) an unsafe rerun unless --no-resume, which drops the changed file's older journals (not another key's). */
export async function refuseUnsafeRerun(g: GuardContext): Promise<void> {
  const earlier = await findEarlierImports(g.dir, { ...g.identity, input: g.input }).catch(() => []);
  if (!g.resume) {
    for (const e of earlier) if (e.kind === 'changed') await unlink(e.path).catch(() => undefined);
    return;
  }
  const latest = (kind: EarlierImport['kind']): EarlierImport | undefined =>
    earlier
      .filter((e) => e.kind === kind)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .pop();
  // rows another mapping did are not in this job's journal, whose rerun sends its rejected rows again: even with a journal of its own
  const options = latest('other-options');
  if (options) throw otherOptionsError(g, options);
  if (earlier.length === 0 || g.hasOwnJournal) return;
  const rotated = latest('other-key');
  if (rotated) throw otherKeyError(g, rotated);
  // a delete of a changed file is a new job (a DELETE sent again deletes nothing twice; its backup is its own:
  // commands/batch/delete-backup.ts); the printed `--delete` of each run's created file is such a file
  const changed = g.identity.operation?.startsWith('delete ') ? undefined : latest('changed');
  const unfinished = earlier.some((e) => e.kind === 'changed' && !e.complete);
  if (changed) throw await changedError(g, changed, unfinished);
}

function otherKeyError(g: GuardContext, rotated: EarlierImport): UsageError {
  const job = jobOf(g.identity);
  const what = rotated.complete ? `was ${job}` : `was partly ${job} (that run did not finish)`;
  const op = g.identity.operation;
  return new UsageError(
    `${g.name} ${what} at ${trimBase(g.identity.baseUrl)} with another API key ` +
      `(${rotated.keyMask ? `${rotated.keyMask}, ` : ''}${rotated.createdAt}); nothing was sent. ` +
      `This key has no journal of that run, and the server keeps Idempotency-Keys per API key, so every row ${op ? 'done then would be sent again' : 'created then would be created again'}.`,
    {
      hint:
        'to resume or finish that run, rerun it with the key it was started with; ' +
        `to run the file with this key anyway, knowing every row in it is ${op ? 'sent' : 'created'} again, add --no-resume`,
    },
  );
}

/** An earlier run of this content with other options (a mapping) did rows: this one would do them again. */
function otherOptionsError(g: GuardContext, earlier: EarlierImport): UsageError {
  const op = g.identity.operation;
  const [done, again] = op ? ['done', 'sent'] : ['created', 'created'];
  return new UsageError(
    `${g.name} was ${earlier.complete ? '' : 'partly '}${jobOf(g.identity)} with other options (--map, --id-column, --chunk-size or --input-format; ${earlier.createdAt}), ` +
      `and rows were ${done} then; nothing was sent. With these options its rows are another job, so the rows ${done} then would be ${again} again.`,
    {
      hint: `to finish that run, rerun it with its own options; to run the file with these options anyway, knowing every row in it is ${again} again, add --no-resume`,
    },
  );
}

async function changedError(g: GuardContext, changed: EarlierImport, unfinished: boolean): Promise<UsageError> {
  const unsettled = unfinished
    ? ' Rows whose request got no answer are not in that file: only the earlier content, rerun as it was, settles them.'
    : '';
  // that import's rejects file, when it left one (an import that created every row left none)
  const op = g.identity.operation;
  const retry = (await exists(g.rejectsPath))
    ? op
      ? `to retry the rows that failed, fix them in the rejects file (${g.rejectsPath}) and run the same command on it.`
      : `to retry the rows that were not created, fix them in the rejects file (${g.rejectsPath}) and run \`crm batch ${g.identity.resource} ${g.rejectsPath}\`.`
    : 'That run left no rows to fix (it has no rejects file).';
  const why = op
    ? 'Its journal no longer matches the rows, so rows done then could be sent again.'
    : 'Its rows now fall into other chunks with other Idempotency-Keys, so the rows created then would be created again.';
  return new UsageError(
    `${g.name} has changed since it was ${jobOf(g.identity)} (${changed.createdAt}); nothing was sent. ${why}`,
    {
      hint: `${retry}${unsettled} To run the changed file anyway, knowing every row in it is ${op ? 'sent' : 'created'} again, add --no-resume`,
    },
  );
}
