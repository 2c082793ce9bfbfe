// The check stage (engine.ts): the one pass over the whole file before anything is sent: hash, header mapping,
// valid/invalid counts, the chunks cut and spooled (spool.ts), and the file refused (exit 2) if malformed, binary or
// undecodable; --strict refuses a file with invalid rows here.
import { InterruptedError, UsageError } from '../../http/errors.js';
import { count } from '../../output/plural.js';
import type { ImportDeps, StageDeps } from '../types.js';
import { DUPLICATE_KEY, type InvalidRow, MAX_NDJSON_KEYS, type RowOperation } from '../shapes.js';
import type { CheckSlice } from '../plan.js';
import type { Spool } from './spool.js';
import { createHash } from 'node:crypto';
import { stringifyJson } from '../../json/exact-json.js';
import type { ApiRecord } from '../../api/envelopes.js';
import { INVALID_CHARACTER, INVALID_ENCODING, TextCheck, UTF8 } from '../input/source.js';
import { classifyRow, type ColumnMap, type HeaderMapping, mapHeader, type RowResult } from '../input/header.js';
import type { ReadRow } from '../input/rows.js';
import { type InputFormat, type InputReader, openInput } from '../input/reader.js';
import { Chunker } from './chunker.js';
import { FirstSeen } from '../../util/first-seen.js';
import { columnTyping, typedRow, type Typing } from '../input/typing.js';
import { ValueKinds } from './value-kinds.js';
import { dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { bareHeader, checkHeaderFields } from '../operation.js';
import { checkMatchColumns } from './columns.js';
import { warnLeftOut, warnRepeated, warnSentAsText } from './notices.js';
export { repeatsWarning } from './notices.js';

export type { InvalidRow } from '../shapes.js';
/** The first pass: the whole file read and checked; `sha`: the content's hash, when the earlier stage computed it. */
export async function check(
  slice: CheckSlice,
  given: { sha?: string; spool?: Spool; typing?: Typing },
  deps: StageDeps,
): Promise<ScanResult> {
  const { input } = slice;
  const scan = await scanInput(input.path, {
    ...{
      format: slice.format,
      name: input.name,
      maps: slice.maps,
      chunkSize: slice.chunkSize,
      encoding: input.encoding,
    },
    ...{ signal: deps.signal, warn: deps.warn, sha: given.sha, op: slice.op, spool: given.spool },
    knownFields: deps.knownFields,
    typing: given.typing,
    // reconcile: every valid row an entry of its own (repeated keys are the match stage's), and the fields it keeps
    ...{ rowsOnly: slice.match !== undefined, keep: slice.match?.keep, matchFields: slice.match?.fields },
    everyRow: slice.everyRow,
    onRow: (rows, bytes) => deps.report('check', { rows, bytes }, null),
  });
  if (deps.signal?.aborted) throw new InterruptedError('interrupted before anything was sent');
  if (slice.strict && scan.invalid > 0) {
    throw new UsageError(
      `${input.name}: ${count(scan.invalid)} of ${count(scan.rows)} rows are invalid; nothing was sent (--strict)\n${listInvalid(scan.firstInvalid)}`,
    );
  }
  return scan;
}

export function listInvalid(rows: readonly InvalidRow[]): string {
  return rows.map((r) => `  line ${r.line}: ${r.reason}`).join('\n');
}

const fieldsOf = (m: HeaderMapping): string[] => m.columns.filter((c) => !c.ignored).map((c) => c.field);

export interface ScanResult {
  format: InputFormat;
  contentSha256: string;
  header: string[] | null;
  mapping?: HeaderMapping;
  rows: number;
  valid: number;
  invalid: number;
  /** the first few invalid rows, in file order */
  firstInvalid: InvalidRow[];
  /** an update, delete or link: the first few requests it would send (`DELETE /contacts/con_1`) */
  firstRequests: string[];
  /** fingerprint of how rows become chunks, stored in the journal */
  plan: string;
  /** NDJSON: the objects' top-level keys, in first-seen order (at most MAX_NDJSON_KEYS) */
  ndjsonKeys: string[];
  /** NDJSON: some object had keys beyond those */
  ndjsonKeysOverflow: boolean;
  /** a create's valid rows whose record repeats an earlier row's: not sent, counted as skipped (among `valid`) */
  repeated: number;
  /** the text columns sent as the kind their records hold (columnTyping), kept in the journal for a resume */
  typing: Typing;
  /** the kinds each field's values can be sent as: the column check suggests no field of another kind */
  kinds: ValueKinds;
}

export interface ScanOptions {
  format: InputFormat;
  name: string;
  maps: ColumnMap;
  chunkSize: number;
  signal?: AbortSignal;
  /** the encoding the file was transcoded from (messages) */
  encoding?: string;
  /** the content hash, when already known: not computed again */
  sha?: string;
  onRow?: (rows: number, bytes: number) => void;
  /** notices: read-only columns left out, RECORD_TOO_LARGE placeholder rows skipped */
  warn?: (message: string) => void;
  /** an update, delete or link: its check of every row and of the header */
  op?: RowOperation;
  /** where the chunks and invalid rows go for the sending pass (not for a dry run) */
  spool?: Spool;
  /** reconcile (`--match`): every valid row an entry of its own, repeated rows left to the match stage (duplicate keys) */
  rowsOnly?: boolean;
  /** every row a record of its own: no repeat check (CheckSlice.everyRow) */
  everyRow?: boolean;
  knownFields?: ImportDeps['knownFields'];
  /** fields kept though the server sets them (`--match id` keeps `id`); an operation's own `keep` otherwise */
  keep?: readonly string[];
  /** reconcile: the --match fields, checked against the header before any row is read */
  matchFields?: readonly string[];
  /** the typing an earlier run of this job sent its cells with (its journal's), used as it is */
  typing?: Typing;
}

function planFingerprint(
  format: InputFormat,
  chunkSize: number,
  mapping: HeaderMapping | undefined,
  o: ScanOptions,
  t: Pick<Tally, 'repeated' | 'typing'>,
): string {
  const shape =
    format === 'csv'
      ? mapping!.columns.map((c) => [c.index, c.field, c.type, c.ignored])
      : [...o.maps.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // a create's plan is as it was before operations existed, so its journals still resume
  const op = o.op ? { op: o.op.describe } : {};
  // repeated rows left out change the chunks: a journal of the same file cut without leaving them out is another plan
  const left = t.repeated > 0 ? { repeated: t.repeated } : {};
  // cells typed otherwise are other bodies
  const typed = t.typing.length > 0 ? { typed: t.typing } : {};
  return createHash('sha256')
    .update(JSON.stringify({ format, chunkSize, shape, ...op, ...left, ...typed }))
    .digest('hex')
    .slice(0, 32);
}

/** What the rows of the first pass add up to. */
class Tally {
  rows = 0;
  invalid = 0;
  readonly firstInvalid: InvalidRow[] = [];
  readonly firstRequests: string[] = [];
  /** rows with a NUL byte or bytes that do not decode, and the first row with a NUL byte */
  binary = 0;
  firstNul: InvalidRow | undefined;
  readonly keys = new Set<string>();
  overflow = false;
  readonly placeholders: number[] = [];
  /** a create's rows repeating an earlier one: how many, and the first few [line, earlier line] */
  repeated = 0;
  readonly firstRepeats: Array<[number, number]> = [];
  /** a create's records by their JSON: the line each first came on (on disk, beside the spool) */
  private repeats?: FirstSeen;
  /** the text columns sent as the kind their records hold */
  typing: Typing = [];
  readonly kinds = new ValueKinds();

  async read(reader: InputReader, o: ScanOptions, mapping: HeaderMapping | undefined): Promise<void> {
    const chunker = new Chunker(o.rowsOnly ? 1 : o.chunkSize);
    // a create's or update's text cells typed as the records hold their fields (a resumed job: as its first run did)
    const typesCells = !o.rowsOnly && (!o.op || o.op.kind === 'update');
    const typed = (this.typing =
      o.typing ?? (typesCells ? await columnTyping(mapping, o.knownFields, o.op?.kind === 'update') : []));
    const spool = o.spool;
    for await (const row of reader.rows) {
      if (o.signal?.aborted) break;
      this.rows++;
      if (row.json !== null && typeof row.json === 'object' && !Array.isArray(row.json))
        this.addKeys(Object.keys(row.json));
      const c =
        notChosen(row, mapping) ?? typedRow(classifyRow(row, mapping, o.maps, o.op, o.op?.keep ?? o.keep), typed);
      let written: Promise<void> | undefined;
      if (!c.ok) {
        this.invalid++;
        const bad = { line: row.line, code: c.code, reason: c.reason };
        if (c.code === INVALID_CHARACTER || c.code === INVALID_ENCODING) this.binary++;
        if (c.code === INVALID_CHARACTER) this.firstNul ??= bad;
        if (this.firstInvalid.length < 10) this.firstInvalid.push(bad);
        written = spool?.invalid({ ...bad, raw: row.raw }, reader.bytesRead());
      } else {
        this.kinds.see(c.record);
        if (o.op && this.firstRequests.length < 10) this.addRequest(o.op, c.record);
        // a create's record serialised once: for the repeat check and the chunk's body
        const json = o.op ? undefined : stringifyJson(c.record);
        const earlier =
          json === undefined || o.rowsOnly || o.everyRow ? undefined : this.firstOf(o).seen(json, row.line);
        if (earlier !== undefined) {
          if (++this.repeated <= 5) this.firstRepeats.push([row.line, earlier]);
        } else {
          const chunk = spool && chunker.push({ line: row.line, record: c.record, raw: row.raw, json });
          if (chunk) written = spool.chunk(chunk, reader.bytesRead());
        }
      }
      if (written) await written;
      if (this.rows % 1000 === 0) o.onRow?.(this.rows, reader.bytesRead());
    }
    if (!spool || o.signal?.aborted) return;
    const last = chunker.flush();
    if (last) await spool.chunk(last, reader.bytesRead());
    await spool.end(reader.bytesRead());
  }

  private firstOf(o: ScanOptions): FirstSeen {
    return (this.repeats ??= new FirstSeen(o.spool ? dirname(o.spool.path) : tmpdir()));
  }

  /** lets go of the repeat check's file */
  close(): void {
    this.repeats?.close();
  }

  private addRequest(op: RowOperation, record: ApiRecord): void {
    const p = op.plan(record);
    const body = p.ok && p.request.body ? ` ${JSON.stringify(p.request.body)}` : '';
    if (p.ok)
      this.firstRequests.push(
        `${p.request.method} ${p.request.path}${body.length > 100 ? `${body.slice(0, 99)}…` : body}`,
      );
  }

  private addKeys(keys: string[]): void {
    for (const k of keys) {
      if (this.keys.size < MAX_NDJSON_KEYS) this.keys.add(k);
      else if (!this.keys.has(k)) this.overflow = true;
    }
  }
}

/**
 * A fed-back rejects file's row still marked DUPLICATE_KEY: it conflicts with another row of its key (other values),
 * and nothing about it is wrong to fix, so sending it would be a choice nobody made (issue 29's re-trial: importing the
 * rejects file, as --help says, overwrote the first row's values with it). Chosen by emptying its `_error_code` cell.
 */
function notChosen(row: ReadRow, mapping: HeaderMapping | undefined): RowResult | undefined {
  const at = mapping?.columns.find((c) => c.column.trim() === '_error_code')?.index;
  const code =
    at !== undefined
      ? row.cells?.[at]
      : row.json !== null && typeof row.json === 'object' && !Array.isArray(row.json)
        ? (row.json as Record<string, unknown>)._error_code
        : undefined;
  if (code !== DUPLICATE_KEY) return undefined;
  return {
    ...{ ok: false, code: DUPLICATE_KEY, field: '' },
    reason:
      'a rejected duplicate (another row of its key had other values): delete the lines you do not want, ' +
      "or empty this row's _error_code cell to send it",
  };
}

export async function scanInput(path: string, o: ScanOptions): Promise<ScanResult> {
  const hash = o.sha === undefined ? createHash('sha256') : undefined;
  const text = new TextCheck();
  const t = new Tally();
  const reader = await openInput(path, {
    ...{ format: o.format, name: o.name, encoding: o.encoding, signal: o.signal, headerless: bareHeader(o.op, o.maps) },
    onPlaceholder: (line) => t.placeholders.push(line),
    onChunk: (c) => {
      hash?.update(c);
      text.push(c);
    },
  });
  let mapping: HeaderMapping | undefined;
  try {
    mapping = reader.header ? await mapHeader(reader.header, o.maps, o.op?.keep ?? o.keep, o.knownFields) : undefined;
    const wrong = o.op && mapping && checkHeaderFields(o.op, fieldsOf(mapping), o.name);
    if (wrong) throw wrong;
    if (o.matchFields) await checkMatchColumns(mapping, o.matchFields, o.name, o.knownFields);
    await t.read(reader, o, mapping);
  } finally {
    reader.close();
    t.close();
  }
  if (!o.signal?.aborted) await refuseNotText(path, o, t, text);
  warnLeftOut(o, mapping, t);
  await warnSentAsText(o, mapping, t);
  warnRepeated(o, t);
  return {
    ...{ format: reader.format, contentSha256: o.sha ?? hash!.digest('hex'), header: reader.header, mapping },
    ...{
      rows: t.rows,
      valid: t.rows - t.invalid,
      invalid: t.invalid,
      firstInvalid: t.firstInvalid,
      firstRequests: t.firstRequests,
    },
    ...{
      plan: planFingerprint(reader.format, o.chunkSize, mapping, o, t),
      ndjsonKeys: [...t.keys],
      ndjsonKeysOverflow: t.overflow,
    },
    repeated: t.repeated,
    typing: t.typing,
    kinds: t.kinds,
  };
}

/** A file whose rows mostly have NUL or undecodable bytes is not text; then any undecodable byte refuses the file. */
async function refuseNotText(path: string, o: ScanOptions, t: Tally, text: TextCheck): Promise<void> {
  if (t.firstNul && t.binary * 2 > t.rows) {
    throw new UsageError(
      `${o.name} is not a text file: ${t.binary} of ${t.rows} rows have NUL bytes or bytes that are not valid text ` +
        `(the first NUL at line ${t.firstNul.line}); nothing was sent`,
      { hint: 'crm batch reads CSV or NDJSON text' },
    );
  }
  text.end();
  if (!text.bad) return;
  await text.resolve(path, o.signal).catch(() => undefined);
  if (!o.signal?.aborted) throw text.error(o.name, o.encoding ?? UTF8)!;
}
