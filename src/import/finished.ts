// A rerun of an import an earlier run finished: recognised by the file's hash before anything is
// read a second time, answered from the journal's completion line, nothing sent.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, readdir } from 'node:fs/promises';
import { InterruptedError } from '../http/errors.js';
import type { ImportDeps, ImportOptions, ImportSummary } from './engine-types.js';
import { ImportJournal } from './journal.js';
import { journalPath, type JournalIdentity } from './journal-identity.js';
import { pruneJournals } from './journal-prune.js';
import type { InputFormat } from './reader.js';
import { defaultRejectsPath, unknownPathFor } from './rejects.js';

/** sha256 of a file's bytes, streamed (the same hash the first pass computes); stops on the signal. */
async function hashFile(path: string, signal?: AbortSignal): Promise<string> {
  const h = createHash('sha256');
  for await (const piece of createReadStream(path, { signal })) h.update(piece as Buffer);
  return h.digest('hex');
}

/**
 * The summary of an import of these bytes that an earlier run finished, when nothing needs doing:
 * resuming, no --results (the ids would be needed), no --strict/--dry-run (they report on the
 * rows), and its rejects file still there when it had rejects (otherwise the rerun rewrites it).
 */
export async function finishedImport(
  opts: ImportOptions,
  deps: ImportDeps,
  input: { path: string; name: string; isStdin: boolean },
  format: InputFormat,
  started: number,
): Promise<ImportSummary | undefined> {
  const dir = deps.journalDir;
  if (!dir || opts.resume === false || opts.resultsPath !== undefined || opts.dryRun || opts.strict) return undefined;
  // no journal at all (a first import): not worth reading the file an extra time
  if (!(await readdir(dir).catch(() => [] as string[])).some((n) => n.endsWith('.jsonl'))) return undefined;
  const sha = await hashFile(input.path, deps.signal).catch(() => undefined);
  if (deps.signal?.aborted) throw new InterruptedError('interrupted before anything was sent');
  if (!sha) return undefined;
  const identity: JournalIdentity = {
    contentSha256: sha,
    resource: opts.resource,
    baseUrl: opts.baseUrl,
    ...(opts.keyId ? { keyId: opts.keyId } : {}),
  };
  const info = (await ImportJournal.completedInfo(dir, identity).catch(() => undefined))?.info;
  if (!info || info.rows === undefined || info.created === undefined || info.failed === undefined || info.invalid === undefined)
    return undefined;
  const rejectsPath = opts.rejectsPath ?? defaultRejectsPath(input.isStdin ? '-' : input.name, format, started, deps.cwd ?? process.cwd());
  const unknownPath = unknownPathFor(rejectsPath);
  const unknown = info.unknown ?? 0;
  const noRejects = info.failed + info.invalid - unknown === 0;
  const present = (p: string): Promise<boolean> =>
    access(p).then(
      () => true,
      () => false,
    );
  if (!noRejects && !(await present(rejectsPath))) return undefined;
  if (unknown > 0 && !(await present(unknownPath))) return undefined;
  deps.warn?.(`${input.name} was already imported into ${opts.resource} (${info.at}): nothing will be sent; use --no-resume to import it again`);
  await pruneJournals(dir, started, { keep: journalPath(dir, identity) }).catch(() => 0);
  return {
    resource: opts.resource,
    rows: info.rows,
    created: 0,
    failed: info.failed,
    invalid: info.invalid,
    skipped: info.created,
    chunks: 0,
    requests: 0,
    retries: 0,
    elapsed_ms: deps.clock.now() - started,
    rejects_file: noRejects ? null : rejectsPath,
    in_doubt: 0,
    unknown,
    unknown_file: unknown > 0 ? unknownPath : null,
  };
}
