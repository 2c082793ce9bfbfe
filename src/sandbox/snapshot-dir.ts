// `--from DIR` (docs/sandbox.md, "Serving a snapshot"): the records of a folder `crm snapshot DIR`
// wrote (manifest.json and one `<resource>.ndjson` per collection), kept with their ids and fields.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiRecord } from '../api/envelopes.js';
import { isResourceName, type ResourceName } from '../api/resources.js';
import { readJsonFile } from './files.js';
import { eachNdjsonLine } from './ndjson-file.js';
import { idText } from '../api/ids.js';
import { loadSnapshotLinks } from './snapshot-links.js';
import { loadSnapshotTranscripts, type SnapshotTranscripts } from './snapshot-transcripts.js';
import type { StoreSnapshot } from './store.js';
import { isPlainObject, needIn, type Need } from './validation.js';

export interface SnapshotDir {
  /** the store to serve (and to go back to on /__sandbox/reset) */
  store: StoreSnapshot;
  /** records per resource, in the order of their files */
  counts: Partial<Record<ResourceName, number>>;
  /** what the start line says on stderr: an incomplete snapshot, counts unlike the manifest's */
  warnings: string[];
  /** DIR/transcripts/<safe id>.json by recording id (snapshot-transcripts.ts) */
  transcripts: SnapshotTranscripts;
}

/** The records of one `<resource>.ndjson`, in file order; throws an Error naming the file and line. */
function readRecords(path: string): ApiRecord[] {
  const records: ApiRecord[] = [];
  const lineOf = new Map<string, number>();
  eachNdjsonLine(path, (record, check, line) => {
    const need: Need = check;
    const id = isPlainObject(record) ? idText(record.id) : undefined;
    need(id !== undefined, 'not a record with a string "id" (or a number)');
    need(!lineOf.has(id), `id ${JSON.stringify(id)} is already on line ${lineOf.get(id)}`);
    lineOf.set(id, line);
    records.push(record as ApiRecord);
  });
  return records;
}

/** The snapshot in `dir`; throws an Error naming the file (and line) when it is not one the sandbox can serve. */
export function loadSnapshotDir(dir: string): SnapshotDir {
  const manifestPath = join(dir, 'manifest.json');
  const manifest = readJsonFile(manifestPath, `snapshot ${manifestPath}`, true);
  const need: Need = needIn(`snapshot ${manifestPath}`);
  need(manifest !== undefined, 'not found (is it a folder written by crm snapshot?)');
  need(isPlainObject(manifest) && typeof manifest.complete === 'boolean', '"complete" must be true or false');
  // as `crm snapshot` writes it: "collections": {"contacts": {"file", "records", "complete"}, …}
  need(isPlainObject(manifest.collections), '"collections" must be an object');
  for (const name of Object.keys(manifest.collections))
    need(isResourceName(name), `collections: unknown resource "${name}"`);
  const records: StoreSnapshot['records'] = {};
  const counts: SnapshotDir['counts'] = {};
  const warnings: string[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.ndjson')) continue;
    const name = file.slice(0, -'.ndjson'.length);
    if (!isResourceName(name))
      throw new Error(
        `snapshot ${join(dir, file)}: "${name}" is not a resource (a file per collection: contacts.ndjson, …)`,
      );
    records[name] = readRecords(join(dir, file));
    counts[name] = records[name].length;
  }
  for (const [name, entry] of Object.entries(manifest.collections)) {
    const said = isPlainObject(entry) ? entry.records : undefined;
    const held = counts[name as ResourceName] ?? 0;
    if (manifest.complete && Number.isInteger(said) && said !== held) {
      warnings.push(`snapshot ${dir}: the manifest counts ${String(said)} ${name}, ${name}.ndjson holds ${held}`);
    }
  }
  if (!manifest.complete) {
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    warnings.push(
      `snapshot ${dir} is not complete (its manifest says "complete": false): serving the ${total} records it holds`,
    );
  }
  const links = loadSnapshotLinks(dir, records, warnings);
  const taken = loadSnapshotTranscripts(dir, records.recordings ?? []);
  warnings.push(...taken.warnings);
  return {
    store: { format: 'crm-sandbox-store/1', seq: 0, records, links },
    counts,
    warnings,
    transcripts: taken.transcripts,
  };
}
