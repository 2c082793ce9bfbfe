// The index the read stage builds (read.ts), in flat memory: the kept records (only the fields later stages read)
// are written as JSON lines to a temporary file of the journal folder, and two hash tables (../../util/hash-table.ts)
// say where — a key's record (or that two or more records share it), and each kept id's latest read. About 60 bytes
// of memory per kept record (a million: ~60 MB), where objects in Maps took ~430 MB.
//
// A collection that shifts between pages can show a record twice: a read again of a kept record replaces its
// earlier read (same key), and one that comes back under another key (edited between pages) or one no longer
// wanted leaves its old key, as the latest read of its id says when the key is looked up. Two reads of one record
// never make its key ambiguous. Two keys sharing a 64-bit hash (odds ~3·10⁻⁸ at a million) are told apart by the
// keys of the records themselves: each record read is kept under its own full key, never under a hash alone.
// Ids may be of any JSON type a server gives (`"con_1"`, `101`): kept as their text, the form a path takes.
import { join } from 'node:path';
import type { ApiRecord } from '../../api/envelopes.js';
import { tempPathFor } from '../../util/atomic-file.js';
import { LineFile } from '../../util/line-file.js';
import { setOwn } from '../../util/set-own.js';
import { HashTable, MAX_VALUE } from '../../util/hash-table.js';
import { parseJson, stringifyJson } from '../../json/exact-json.js';
import { matchKey, UnseenFields } from './key.js';
import { FieldKinds } from '../input/typing.js';
import type { IndexEntry } from '../shapes.js';
import { idText } from '../../api/ids.js';
export type { IndexEntry, Indexed } from '../shapes.js';

/** a key's value in `byKey` when records share it (their ids in `shared`); an id's in `byId` when its latest read is not kept */
const SHARED = MAX_VALUE;
const GONE = MAX_VALUE;

export class RecordIndexBuilder {
  /** key → (column 1) the number of its record's line, or SHARED: the file's own keys table when given */
  private readonly byKey: HashTable;
  /** kept id → the number of its latest read's line, or GONE */
  private readonly byId = new HashTable();
  private readonly shared = new Map<string, string[]>();
  /** the file's keys a record without a usable id holds */
  private readonly idless = new Set<string>();
  private readonly lines: LineFile;
  private readonly project: readonly string[];
  readonly fieldsSeen = new Set<string>();
  /** the JSON kind every record read holds each of the file's fields as */
  private readonly kinds = new FieldKinds();
  /** distinct records read (an unwanted record read twice counts twice: its id is not kept) */
  records = 0;
  /** the match fields no record read has had (a misspelt field: every key undefined, every row "not found"), and the
   * first record's fields, for a "did you mean" */
  private readonly seen: UnseenFields;
  get unseen(): string[] {
    return this.seen.unseen;
  }
  get firstFields(): string[] | undefined {
    return this.seen.first;
  }

  private readonly wanted: (key: string) => boolean;

  /**
   * `wanted`: the file's keys — a two-column HashTable of them (the match stage's, whose second column then holds
   * the records: one table for both), or a test; `dir`: a folder for the temporary file (the journal folder)
   */
  constructor(
    private readonly fields: readonly string[],
    keep: readonly string[],
    wanted: HashTable | ((key: string) => boolean),
    dir: string,
    /** false: no fieldsSeen and no sample(), which only the batch's column check reads (a read of 1,000,000 records ~1 s less) */
    private readonly survey = true,
  ) {
    this.project = [...new Set([...fields, ...keep])];
    this.seen = new UnseenFields(fields);
    this.byKey = wanted instanceof HashTable ? wanted : new HashTable(2);
    this.wanted = wanted instanceof HashTable ? (key) => wanted.get(key) !== undefined : wanted;
    this.lines = new LineFile(tempPathFor(join(dir, 'index')));
  }

  /** records kept: an id whose latest read has a key of the file */
  kept = 0;

  add(record: ApiRecord): void {
    this.seen.see(record);
    if (this.survey) {
      for (const field of Object.keys(record)) this.fieldsSeen.add(field);
      this.kinds.see(record, this.project);
    }
    const key = matchKey(this.fields, record);
    const id = idText(record.id);
    if (id === undefined) {
      this.records++;
      // a record crm could not name in a PATCH: the rows with its key are reported, never planned as creates
      if (key !== undefined && this.wanted(key)) this.idless.add(key);
      return;
    }
    const before = this.byId.get(id);
    if (before === undefined) this.records++;
    const wasKept = before !== undefined && before !== GONE;
    if (key === undefined || !this.wanted(key)) {
      if (wasKept) {
        this.kept--;
        this.byId.set(id, GONE);
      }
      return;
    }
    const n = this.lines.append(stringifyJson([id, this.pick(record)])!);
    this.byId.set(id, n);
    if (!wasKept) this.kept++;
    const there = this.byKey.get(key, 1);
    if (there === undefined) return this.byKey.set(key, n, 1);
    if (there !== SHARED) {
      const [other, otherRecord] = this.line(there);
      if (other === id) return this.byKey.set(key, n, 1);
      // two records under one hash: each goes under its own full key (the same key, or two sharing the hash)
      this.byKey.set(key, SHARED, 1);
      this.share(matchKey(this.fields, otherRecord)!, other);
    }
    this.share(key, id);
  }

  private share(key: string, id: string): void {
    const ids = this.shared.get(key) ?? [];
    if (!ids.includes(id)) this.shared.set(key, [...ids, id]);
  }

  get(key: string): IndexEntry | undefined {
    if (this.idless.has(key)) return { noId: true };
    const there = this.byKey.get(key, 1);
    if (there === undefined) return undefined;
    // a key sharing another's 64-bit hash finds its own `shared` entry, or none; the latest read checks it again
    const ids = there === SHARED ? (this.shared.get(key) ?? []) : [this.line(there)[0]];
    // each id's latest read, if it still has this key
    const live = ids.flatMap((id) => {
      const n = this.byId.get(id);
      if (n === undefined || n === GONE) return [];
      const [, record] = this.line(n);
      return matchKey(this.fields, record) === key ? [{ id, record }] : [];
    });
    if (live.length === 0) return undefined;
    return live.length === 1 ? { one: live[0]! } : { ids: live.map((e) => e.id) };
  }

  /** A value of the type the CRM's records hold `field` as (a number: 0, a boolean: false, a list: []), when they all agree. */
  sample(field: string): unknown {
    return this.kinds.sample(field);
  }

  close(): void {
    this.lines.close();
  }

  private line(n: number): [string, ApiRecord] {
    return parseJson(this.lines.read(n)) as [string, ApiRecord];
  }

  private pick(record: ApiRecord): ApiRecord {
    const out: ApiRecord = {};
    for (const field of this.project) if (Object.hasOwn(record, field)) setOwn(out, field, record[field]);
    return out;
  }
}
