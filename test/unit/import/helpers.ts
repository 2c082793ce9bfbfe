// Shared helpers for the import tests: temp folders and reading a whole input.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { openInput, type OpenInputOptions, type ReadRow } from '../../../src/import/input/reader.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'crm-import-'));
  dirs.push(d);
  return d;
}

/** Write `content` to a new temp file and return its path. */
export function tempFile(content: string | Buffer, name = 'input.csv'): string {
  const p = join(tempDir(), name);
  writeFileSync(p, content);
  return p;
}

export async function readAll(
  path: string,
  opts: OpenInputOptions = {},
): Promise<{ header: string[] | null; rows: ReadRow[] }> {
  const r = await openInput(path, opts);
  const rows: ReadRow[] = [];
  for await (const row of r.rows) rows.push(row);
  return { header: r.header, rows };
}
