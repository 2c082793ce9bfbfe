// Earlier imports that make a new one unsafe (CONTRACT §7), found from the journals' headers:
// - the same file path, changed since (any key): its rows now fall into other chunks with other
//   Idempotency-Keys, so the rows created then would be created again;
// - the same content under another API key (a rotated key): this key has no journal of it, and
//   the server's idempotency cache is per key, so every row would be created again.
// Either is refused (exit 2, nothing sent) unless this identity has a journal of its own or the
// user passes --no-resume. Only an import that may have created rows counts: one whose chunks were
// all refused whole (a read-only key's 403s) or failed item by item created nothing.
import { access, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../http/errors.js';
import { listDir } from '../util/fs.js';
import { parseLine, readComplete, readHeader, streamLines, trimBase, type FinishedChunk, type JournalIdentity } from './journal-format.js';
import { NO_RESULT_CODE } from './outcome.js';

interface EarlierImport {
  path: string;
  kind: 'changed' | 'other-key';
  createdAt: string;
  /** the earlier import's key, masked, when its journal recorded it */
  keyMask?: string;
  complete: boolean;
}

/**
 * Journals of the same resource and base URL, of the same input path with other content
 * (`changed`; never for stdin, `-`) or of the same content under another key, that may have created rows.
 */
async function findEarlierImports(dir: string, match: JournalIdentity & { input: string }): Promise<EarlierImport[]> {
  const out: EarlierImport[] = [];
  for (const name of (await listDir(dir)).filter((n) => n.endsWith('.jsonl'))) {
    const path = join(dir, name);
    const h = await readHeader(path);
    if (!h || h.resource !== match.resource || trimBase(h.base_url) !== trimBase(match.baseUrl)) continue;
    const changed = match.input !== '-' && h.input === match.input && h.content_sha256 !== match.contentSha256;
    const otherKey = h.content_sha256 === match.contentSha256 && match.keyId !== undefined && h.key_id !== undefined && h.key_id !== match.keyId;
    if (!changed && !otherKey) continue;
    const complete = await readComplete(path);
    const created = complete?.compacted
      ? (complete.created ?? 1) > 0 || (complete.unknown ?? 0) > 0
      : await mayHaveCreated(path).catch(() => true);
    if (!created) continue;
    const keyMask = h.key_mask ? { keyMask: h.key_mask } : {};
    out.push({ path, kind: changed ? 'changed' : 'other-key', createdAt: h.created_at, ...keyMask, complete: complete !== undefined });
  }
  return out;
}

/**
 * Whether a journal shows rows that may exist: a finished chunk with a row not rejected (or one the
 * answer said nothing about), or a chunk sent with neither an answer nor an `unsent` after it.
 */
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

/**
 * Refuses (exit 2) an import that would create rows an earlier import created, unless --no-resume;
 * with --no-resume, journals of the changed file's older content are dropped as superseded (another
 * key's journal of the same content is left alone: it is that key's record).
 */
export async function refuseUnsafeRerun(g: GuardContext): Promise<void> {
  const earlier = await findEarlierImports(g.dir, { ...g.identity, input: g.input }).catch(() => []);
  if (!g.resume) {
    for (const e of earlier) if (e.kind === 'changed') await unlink(e.path).catch(() => undefined);
    return;
  }
  if (earlier.length === 0 || g.hasOwnJournal) return;
  const latest = (kind: EarlierImport['kind']): EarlierImport | undefined =>
    earlier
      .filter((e) => e.kind === kind)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .pop();
  const rotated = latest('other-key');
  if (rotated) throw otherKeyError(g, rotated);
  const changed = latest('changed');
  if (changed)
    throw await changedError(
      g,
      changed,
      earlier.some((e) => e.kind === 'changed' && !e.complete),
    );
}

function otherKeyError(g: GuardContext, rotated: EarlierImport): UsageError {
  const what = rotated.complete ? 'was imported' : 'was partly imported (the import did not finish)';
  return new UsageError(
    `${g.name} ${what} into ${g.identity.resource} at ${trimBase(g.identity.baseUrl)} with another API key ` +
      `(${rotated.keyMask ? `${rotated.keyMask}, ` : ''}${rotated.createdAt}); nothing was sent. ` +
      'This key has no journal of that import, and the server keeps Idempotency-Keys per API key, so every row created then would be created again.',
    {
      hint:
        'to resume or finish that import, rerun it with the key it was started with; ' +
        'to import the file with this key anyway, knowing every row in it is created again, add --no-resume',
    },
  );
}

async function changedError(g: GuardContext, changed: EarlierImport, unfinished: boolean): Promise<UsageError> {
  const unsettled = unfinished
    ? ' Rows whose request got no answer are not in that file: only the earlier content, rerun as it was, settles them.'
    : '';
  // that import's rejects file, when it left one (an import that created every row left none)
  const retry = (await access(g.rejectsPath).then(
    () => true,
    () => false,
  ))
    ? `to retry the rows that were not created, fix them in the rejects file (${g.rejectsPath}) and run \`crm batch ${g.identity.resource} ${g.rejectsPath}\`.`
    : 'That import left no rows to fix (it has no rejects file).';
  return new UsageError(
    `${g.name} has changed since it was imported into ${g.identity.resource} (${changed.createdAt}); nothing was sent. ` +
      'Its rows now fall into other chunks with other Idempotency-Keys, so the rows created then would be created again.',
    { hint: `${retry}${unsettled} To import the changed file anyway, knowing every row in it is created again, add --no-resume` },
  );
}
