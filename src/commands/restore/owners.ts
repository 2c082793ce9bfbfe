// The owners of the records a restore created (CONTRACT §10): `owner_id` cannot be sent on create (the server gives a
// record to the key's user), so after a collection's creates each created record's owner goes to an owners file
// (`id,owner_id`, the target's ids) — the snapshot's owner in the same organization, else through `--owners FILE`
// (`old_id,new_id`); an owner without a mapping is left as the key's user and counted — where it differs from the owner
// the server gave it, and that file is sent by the batch engine: a PATCH a row, nothing read, when this run's creates
// named the key's user; else (their creates were an earlier run's) reconciled by id (`--match id`: the records read, a
// PATCH only where the owner differs). Judged by what the CRM holds: the same restore again sends nothing.
import { readFile } from 'node:fs/promises';
import { parse as parseCsv } from 'csv-parse/sync';
import { InterruptedError, UsageError } from '../../http/errors.js';
import type { HttpClient } from '../../http/types.js';
import { csvLine } from '../../import/files/outputs.js';
import { httpSender, matchReader, runImport, updateOperation } from '../../import/index.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { AtomicTextFile } from '../../util/atomic-file.js';

/** `--owners FILE`: each old user id's new one; an error naming the file and line. */
export async function readOwners(file: string | undefined): Promise<Map<string, string> | undefined> {
  if (file === undefined) return undefined;
  const owners = new Map<string, string>();
  const shown = sanitizeForTerminal(file);
  try {
    // a map of users: small, read whole (a file that cannot be read is said as the rest, exit 2)
    const rows: string[][] = parseCsv(await readFile(file), { bom: true, skip_empty_lines: true, trim: true });
    let line = 0;
    for (const r of rows) {
      line++;
      if (line === 1) {
        if (r.join(',') !== 'old_id,new_id')
          throw new UsageError(`--owners ${shown}: the header must be old_id,new_id`);
        continue;
      }
      const [from, to] = r;
      if (r.length !== 2 || !from || !to)
        throw new UsageError(`--owners ${shown}, line ${line}: expected old_id,new_id`);
      if (owners.has(from) && owners.get(from) !== to)
        throw new UsageError(
          `--owners ${shown}, line ${line}: ${from} is mapped twice (to ${owners.get(from)} and ${to})`,
        );
      owners.set(from, to);
    }
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--owners ${shown}: ${(err as Error).message}`);
  }
  return owners;
}

export interface OwnersOptions {
  client: HttpClient;
  /** the same organization (owners kept as they are), else `--owners` (undefined: none given) */
  sameOrg: boolean;
  owners?: ReadonlyMap<string, string>;
  engine: { baseUrl: string; keyId?: string; keyMask?: string; journalDir: string };
  clock: { now(): number };
  signal?: AbortSignal;
  warn: (m: string) => void;
}

export interface OwnersResult {
  /** owners set by a PATCH */
  set: number;
  /** created records still the key's user's: their snapshot owner has no mapping here (`unmapped`), or their collection
   * cannot be updated (`fixed`: interactions) */
  unmapped: number;
  fixed: number;
  owners_file: string | null;
  /** owners not set: their PATCH failed, or the run of them stopped (`why`); the owners file sets them later */
  failed: number;
  why?: string;
}

/** The owner a created record should have here: the snapshot's (the same organization), `--owners`'s for it, or none. */
export function ownerHere(owner: unknown, o: Pick<OwnersOptions, 'sameOrg' | 'owners'>): string | null | undefined {
  if (typeof owner !== 'string' || owner === '') return null;
  return o.owners?.get(owner) ?? (o.sameOrg ? owner : undefined);
}

/**
 * The owners file of one collection's creates, written as the created records are read (a million of them are not held
 * in memory), then sent: when this run created records, the server's answer named the owner it gives them (the key's
 * user), so a row only where the owner differs from it and a PATCH each, nothing read; else (a rerun whose creates an
 * earlier run made: an owner may have been set since) reconciled by id, the records read, a PATCH where it differs.
 */
export class OwnersFile {
  private rows = 0;
  unmapped = 0;
  fixed = 0;
  private out: AtomicTextFile | undefined;

  constructor(
    readonly path: string,
    private readonly o: OwnersOptions,
    private readonly created: {
      /** the collection has PATCH (interactions have not: their owners are left) */
      updatable: boolean;
      /** the owner the server gave the records this run created (their create's answer): none when it created none */
      keyOwner?: string;
    },
  ) {}

  async add(target: string, owner: unknown): Promise<void> {
    const to = ownerHere(owner, this.o);
    if (to === null || (to !== undefined && to === this.created.keyOwner)) return;
    if (to === undefined || !this.created.updatable) {
      if (to === undefined) this.unmapped++;
      else this.fixed++;
      return;
    }
    this.out ??= await AtomicTextFile.create(this.path);
    if (this.rows++ === 0) this.out.write(csvLine(['id', 'owner_id']));
    this.out.write(csvLine([target, to]));
  }

  /** The file committed and reconciled; none when no created record has an owner to set. */
  async settle(resource: string): Promise<OwnersResult> {
    const none = { unmapped: this.unmapped, fixed: this.fixed };
    if (!this.out) return { ...none, set: 0, failed: 0, owners_file: null };
    await this.out.commit();
    const o = this.o;
    // the key's user known: each row's owner differs from the one its record was given, a PATCH each (journaled)
    const byPatch = this.created.keyOwner !== undefined;
    const operation = byPatch ? updateOperation(resource) : undefined;
    const summary = await runImport(
      {
        ...{ resource, input: this.path, baseUrl: o.engine.baseUrl },
        ...(byPatch ? { operation } : { match: { fields: ['id'] } }),
        ...{ keyId: o.engine.keyId, keyMask: o.engine.keyMask },
      },
      {
        send: httpSender(o.client, operation),
        readIndex: byPatch ? undefined : matchReader(o.client, resource, o.clock, o.signal),
        ...{ journalDir: o.engine.journalDir, clock: o.clock, signal: o.signal, warn: o.warn },
        stats: () => ({ ...o.client.stats }),
      },
    ).catch((err: unknown) => {
      // the records are there: an owner run that stops (its first rows all refused) leaves them the key's user's, said
      // with the owners file's command; only Ctrl-C stops the restore
      if (err instanceof InterruptedError)
        throw new InterruptedError(
          `setting the owners of the records created: ${err.message.replace(/^interrupted:?\s*/, '')}`,
        );
      if (!(err instanceof Error)) throw err;
      return err;
    });
    if (summary instanceof Error)
      return { ...none, set: 0, failed: this.rows, why: summary.message, owners_file: this.path };
    const set = byPatch ? summary.created : (summary.reconcile?.updated ?? 0);
    return { ...none, set, failed: summary.failed + summary.invalid, owners_file: this.path };
  }
}
