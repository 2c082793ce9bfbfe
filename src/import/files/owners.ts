// The owners file (issues 19, 28): a create cannot send owner_id (the server sets it to the key's user), so a create
// whose rows carry one — a delete's backup imported again, under any name, or an export imported into the CRM again —
// writes `<input>.owners.csv`, each new id with the owner its row had, for `crm batch RESOURCE <input>.owners.csv
// --match id`; and a backup's summary names the links that did not come back (`recreated`).
import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { parse as parseCsv } from 'csv-parse';
import { linksTo } from '../../api/resources.js';
import { UsageError } from '../../http/errors.js';
import { guardFormula } from '../../output/formula-guard.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import type { InputFormat } from '../shapes.js';
import type { ImportSummary } from '../types.js';
import {
  convertCell,
  normalizeFieldName,
  parseColumnMaps,
  parseHeader,
  splitType,
  type FieldType,
} from '../input/header.js';
import { detectFormat, openInput } from '../input/reader.js';
import { prepareInput } from '../input/source.js';
import { isBackupFile } from './backup.js';
import { LINKS_KEY, ownRelations } from './backup-links.js';
import { csvLine, keptColumns } from './outputs.js';

/**
 * A run of `crm batch` as its owners file sees it: the input as the engine reads it (--input-format, --encoding,
 * --map), `--results`, and whether it is a plain create (no update, delete, link or --match, no dry run).
 */
export interface RestoreRun {
  file: string;
  resource: string;
  results?: string;
  creates: boolean;
  format?: InputFormat;
  encoding?: string;
  maps?: readonly string[];
  /** where a copy of an input in another encoding is read from (the journal folder, as the engine's) */
  tmpDir: string;
  /** Ctrl-C: the file is not read on (the engine then says it was interrupted) */
  signal?: AbortSignal;
}

/** Where the results file holds each row's owner_id: a CSV input's column (by its place, as typed), an NDJSON or JSON input's key. */
type OwnerColumn = { at: number; type: FieldType } | { key: 'owner_id' };

/**
 * The `--results` file of a create that leaves owner_id out, or of a delete's backup holding links (`links`: its new
 * ids are linked again after the create, backup-links.ts); `temporary`: crm's own, removed once read (dropResults).
 */
export type RestoreResults = { path?: string; temporary: boolean; owner?: OwnerColumn; links?: boolean };

/**
 * The owners file follows from what the file holds, not its name (issue 28: a `--backup mine.ndjson`, or an export
 * imported into the CRM again, lost every owner): a plain create whose rows carry owner_id, which a create cannot send
 * (the server sets it: READ_ONLY_FIELDS), maps each line to its new id through the --results machinery (the engine
 * writes `_line,id` and the row's own columns, owner_id among them, from its journal: every row created by this run
 * or an earlier one): the file named by --results, else a temporary one beside the input, removed once read.
 */
export async function restoreResults(run: RestoreRun): Promise<RestoreResults> {
  const owner = run.creates ? await ownerLeftOut(run).catch(() => undefined) : undefined;
  const links = run.creates && (await holdsLinks(run).catch(() => false));
  // an NDJSON results file (createResultsWriter: of an NDJSON input, named .ndjson or .jsonl) is not read back here
  if (((owner !== undefined && 'key' in owner) || links) && /\.(ndjson|jsonl)$/i.test(run.results ?? ''))
    throw new UsageError(
      `${run.file}: ${links ? "its records' links are made again" : "its rows' owner_id is left out (the server sets it on create), and the owners file that gives it back is made"} ` +
        `from a CSV results file, not --results ${run.results}; nothing was sent`,
      { hint: `name a results file ending in .csv, or leave out --results` },
    );
  if ((owner === undefined && !links) || run.results !== undefined)
    return { path: run.results, temporary: false, owner, links };
  return { path: `${run.file}.results-${process.pid}-${Date.now()}.tmp.csv`, temporary: true, owner, links };
}

/** A delete's backup of deals, notes or segments that kept their links (`_links`): an NDJSON file holding the key. */
async function holdsLinks(run: RestoreRun): Promise<boolean> {
  if (run.file === '-' || ownRelations(run.resource).length === 0) return false;
  if ((run.format ?? detectFormat(run.file)) !== 'ndjson' || !(await stat(run.file)).isFile()) return false;
  return fileHolds(run.file, `"${LINKS_KEY}"`);
}

/** crm's own results file, once read (the owners file, the links made again). */
export async function dropResults(results: RestoreResults): Promise<void> {
  if (results.temporary && results.path) await rm(results.path, { force: true });
}

/** Each line of the input the create made a record of, and its new id: the results file's `_line` and `id`. */
export async function createdLines(resultsPath: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const rows = createReadStream(resultsPath).pipe(
    parseCsv({ bom: true, skip_empty_lines: true, relax_column_count: true, from_line: 2 }),
  );
  for await (const r of rows as AsyncIterable<string[]>) if (r[1]) out.set(Number(r[0]), r[1]);
  return out;
}

/**
 * Where the rows' owner_id is when the create leaves it out, read before the run as the engine will read the file:
 * a CSV header's column that parseHeader leaves out as owner_id (a read-only field: not given by --map, nor written
 * exactly as `"owner_id"`); an NDJSON or JSON row's key owner_id, unless --map names it. None for standard input (no
 * `<input>` to name the file by). An NDJSON file is only searched for the text `owner_id` (not parsed a second
 * time): a file holding it elsewhere only costs a results file, as writeOwners takes owners from the rows created.
 */
async function ownerLeftOut(run: RestoreRun): Promise<OwnerColumn | undefined> {
  if (run.file === '-' || !(await stat(run.file)).isFile()) return undefined;
  const maps = parseColumnMaps(run.maps);
  const format = run.format ?? detectFormat(run.file);
  if (format === 'ndjson' && maps.has('owner_id')) return undefined;
  const input = await prepareInput(run.file, { tmpDir: run.tmpDir, encoding: run.encoding, signal: run.signal });
  try {
    if (format === 'ndjson') return (await fileHolds(input.path, 'owner_id')) ? { key: 'owner_id' } : undefined;
    const reader = await openInput(input.path, { format, name: run.file });
    try {
      const header = reader.header ?? [];
      const owner = parseHeader(header, maps).columns.find((c) => c.readOnly && readOnlyField(c.column) === 'owner_id');
      // the results file's columns: `_line`, `id`, then the input's kept columns (createResultsWriter)
      return owner && { at: 2 + keptColumns(header).indexOf(owner.index), type: splitType(owner.column.trim()).type };
    } finally {
      reader.close();
    }
  } finally {
    await input.cleanup();
  }
}

/** The field a header left out as read-only names (parseHeader's own normalising). */
const readOnlyField = (column: string): string => normalizeFieldName(splitType(column.trim()).name);

/** Whether the file's bytes hold `text`: read in pieces, each searched with the end of the one before. */
async function fileHolds(path: string, text: string): Promise<boolean> {
  const want = Buffer.from(text, 'utf8');
  let tail = Buffer.alloc(0);
  for await (const piece of createReadStream(path)) {
    const joined = Buffer.concat([tail, piece as Buffer]);
    if (joined.includes(want)) return true;
    tail = joined.subarray(Math.max(0, joined.length - want.length + 1));
  }
  return false;
}

/**
 * `<input>.owners.csv` (issues 19, 28): the records a create made belong to the key's user (the server sets owner_id
 * on create), so each new id with the owner its row had, `id,owner_id`, for `crm batch RESOURCE <input>.owners.csv
 * --match id`. Written durably (0600, renamed into place) before the summary; only rows created whose owner_id held
 * text; none when there are none. The owner is read from the results file's row as the engine reads a cell (CSV: the
 * column's type, the formula guard undone) and written guarded again, so the owners file gives back the exact text.
 */
export async function writeOwners(run: RestoreRun, results: RestoreResults): Promise<string | undefined> {
  const { owner } = results;
  if (owner === undefined || results.path === undefined) return undefined;
  // read as it streams: a create's results file is as big as its input
  const rows = createReadStream(results.path).pipe(
    parseCsv({ bom: true, skip_empty_lines: true, relax_column_count: true }),
  );
  const owned: string[] = [];
  let column: { at: number; type: FieldType } | undefined;
  for await (const r of rows as AsyncIterable<string[]>) {
    if (column === undefined) {
      column = 'key' in owner ? { at: r.indexOf(owner.key), type: 'string' } : owner;
      continue;
    }
    // the owner's column is after `_line` and `id` (none: an NDJSON file holding the text owner_id elsewhere)
    const cell = column.at < 2 ? undefined : convertCell(r[column.at] ?? '', column.type);
    if (r[1] && cell?.ok && typeof cell.value === 'string') owned.push(csvLine([r[1], guardFormula(cell.value)]));
  }
  if (owned.length === 0) return undefined;
  const path = `${run.file}.owners.csv`;
  await writeFileAtomic(path, 'id,owner_id\r\n' + owned.join(''));
  return path;
}

/**
 * A create's summary with what it could not send: the owners file; and for a delete's backup imported again (a file
 * named `*.deleted.ndjson`), the links its records had that do not come back: other records' links to them, and their
 * own unless the backup kept them (`linksKept`: made again after the create, backup-links.ts).
 */
export function recreated(file: string, s: ImportSummary, owners?: string, linksKept = false): ImportSummary {
  if (s.operation || s.created === 0) return s;
  const lost = linksTo(s.resource).filter((l) => !(linksKept && l.path.startsWith(`${s.resource}/`)));
  return {
    ...s,
    ...(isBackupFile(file) ? { links_not_restored: lost.map((l) => l.path) } : {}),
    ...(owners ? { owners_file: owners } : {}),
  };
}
