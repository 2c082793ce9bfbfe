// Earlier imports that make a new one unsafe (CONTRACT §7), found from the journals' headers:
// - the same file path, changed since (any key): its rows now fall into other chunks with other
//   Idempotency-Keys, so the rows created then would be created again;
// - the same content under another API key (a rotated key of the same organization): this key has
//   no journal of it, and the server's idempotency cache is per key, so every row would be created
//   again — the finished chunks because nothing says they are done, the in-flight ones because the
//   cache does not answer another key.
// Either is refused (exit 2, nothing sent) unless this identity has a journal of its own or the
// user passes --no-resume, knowingly. Only an earlier import that may have created rows counts: one
// whose chunks were all refused whole (a read-only key's 403s) or failed item by item created
// nothing, and importing again cannot create anything twice.
import { access, open, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../http/errors.js';
import { trimBase, type JournalIdentity } from './journal-identity.js';
import { lineKind, openLine, readComplete, readHeader, streamLines, type CompleteInfo, type FinishedChunk } from './journal-line.js';
import { NO_RESULT_CODE } from './outcome.js';

export interface EarlierImport {
  path: string;
  kind: 'changed' | 'other-key';
  createdAt: string;
  /** the earlier import's key, masked (`service_live_…f3a9`), when its journal recorded it */
  keyMask?: string;
  /** a chunk of it created rows, or was sent without an answer (it may have) */
  mayHaveCreated: boolean;
  /** the journal has its `complete` line */
  complete: boolean;
}

/**
 * Journals of the same resource and base URL that are either of the same input path with other
 * content (`changed`; never for stdin, `-`), or of the same content under another key (`other-key`).
 * A journal from before keys were recorded is this key's (journal-identity.ts), never `other-key`.
 */
export async function findEarlierImports(dir: string, match: JournalIdentity & { input: string }): Promise<EarlierImport[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const out: EarlierImport[] = [];
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const path = join(dir, name);
    const h = await readHeader(path);
    if (!h || h.resource !== match.resource || trimBase(h.base_url) !== trimBase(match.baseUrl)) continue;
    const changed = match.input !== '-' && h.input === match.input && h.content_sha256 !== match.contentSha256;
    const otherKey = h.content_sha256 === match.contentSha256 && match.keyId !== undefined && h.key_id !== undefined && h.key_id !== match.keyId;
    if (!changed && !otherKey) continue;
    const complete = await readComplete(path).catch(() => undefined);
    out.push({
      path,
      kind: changed ? 'changed' : 'other-key',
      createdAt: h.created_at,
      ...(h.key_mask ? { keyMask: h.key_mask } : {}),
      mayHaveCreated: await mayHaveCreated(path, complete).catch(() => true),
      complete: complete !== undefined,
    });
  }
  return out;
}

/**
 * Whether an import's journal shows rows that may exist: a finished chunk with a row not rejected
 * (or one the answer said nothing about), or a chunk sent with neither an answer nor a refusal
 * after it. A compacted journal has only its totals. Read once, streaming; a few bytes per chunk.
 */
async function mayHaveCreated(path: string, complete: CompleteInfo | undefined): Promise<boolean> {
  if (complete?.compacted) return (complete.created ?? 1) > 0 || (complete.unknown ?? 0) > 0;
  const fh = await open(path, 'r');
  try {
    let created = false;
    /** chunks sent and neither answered nor unsent (stopped before they went, or refused whole by a 401/403/404) */
    const pending = new Set<number>();
    let first = true;
    await streamLines(fh, (line) => {
      const header = first;
      first = false;
      if (header || created) return;
      const k = lineKind(line);
      if (!k || k.seq === undefined) return;
      if (k.type === 'sent') pending.add(k.seq);
      else if (k.type === 'unsent') pending.delete(k.seq);
      else if (k.type === 'chunk') {
        pending.delete(k.seq);
        const c = openLine(line) as unknown as FinishedChunk | undefined;
        const notCreated = c?.rejects.filter((r) => r.code !== NO_RESULT_CODE).length ?? 0;
        if (!c || c.lines.length > notCreated) created = true;
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
  hasOwnJournal: () => Promise<boolean>;
}

/**
 * Refuses (UsageError, exit 2) an import that would create rows an earlier import created, unless
 * --no-resume; with --no-resume, journals of the changed file's older content are dropped as
 * superseded (another key's journal of the same content is left alone: it is that key's record).
 */
export async function refuseUnsafeRerun(g: GuardContext): Promise<void> {
  const earlier = (await findEarlierImports(g.dir, { ...g.identity, input: g.input }).catch(() => [])).filter((e) => e.mayHaveCreated);
  if (earlier.length === 0) return;
  if (!g.resume) {
    for (const e of earlier) if (e.kind === 'changed') await unlink(e.path).catch(() => undefined);
    return;
  }
  if (await g.hasOwnJournal()) return;
  const { resource, baseUrl } = g.identity;
  const latest = (kind: EarlierImport['kind']): EarlierImport | undefined =>
    earlier
      .filter((e) => e.kind === kind)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
      .pop();
  const rotated = latest('other-key');
  if (rotated) {
    const what = rotated.complete ? 'was imported' : 'was partly imported (the import did not finish)';
    throw new UsageError(
      `${g.name} ${what} into ${resource} at ${trimBase(baseUrl)} with another API key ` +
        `(${rotated.keyMask ? `${rotated.keyMask}, ` : ''}${rotated.createdAt}); nothing was sent. ` +
        'This key has no journal of that import, and the server keeps Idempotency-Keys per API key, so every row created then would be created again.',
      {
        hint:
          'to resume or finish that import, rerun it with the key it was started with; ' +
          'to import the file with this key anyway, knowing every row in it is created again, add --no-resume',
      },
    );
  }
  const changed = latest('changed');
  if (changed) {
    const unsettled = earlier.some((e) => e.kind === 'changed' && !e.complete)
      ? ' Rows whose request got no answer are not in that file: only the earlier content, rerun as it was, settles them.'
      : '';
    // the rejects file of that import, when it left one (an import of a fixed rejects file that
    // created every row left none: naming `<it>.rejects.csv` pointed at a file that never existed)
    const retry = (await access(g.rejectsPath).then(
      () => true,
      () => false,
    ))
      ? `to retry the rows that were not created, fix them in the rejects file (${g.rejectsPath}) and run \`crm batch ${resource} ${g.rejectsPath}\`.`
      : 'That import left no rows to fix (it has no rejects file).';
    throw new UsageError(
      `${g.name} has changed since it was imported into ${resource} (${changed.createdAt}); nothing was sent. ` +
        'Its rows now fall into other chunks with other Idempotency-Keys, so the rows created then would be created again.',
      {
        hint: `${retry}${unsettled} To import the changed file anyway, knowing every row in it is created again, add --no-resume`,
      },
    );
  }
}
