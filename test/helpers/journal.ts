// What a run's journal (CRM_CONFIG_DIR/imports/*.jsonl, src/import/journal/) says while the run goes on:
// a test that must act with a chunk in flight waits for the journal's own record of one, not for a time.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The journals in the config folder `configDir` (none before its first run). */
export function journalFiles(configDir: string): Set<string> {
  const dir = join(configDir, 'imports');
  return new Set(existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.jsonl')) : []);
}

/**
 * Whether a journal not in `before` has a chunk sent after the first answer was journaled and not
 * answered itself: a request that went out (or is about to: its `sent` line comes first) after the
 * first answers, in flight for the server's whole latency. (Not one sent with the first: its answer
 * may be arriving now.)
 */
export function sentUnanswered(configDir: string, before: Set<string>): boolean {
  for (const name of journalFiles(configDir)) {
    if (before.has(name)) continue;
    const entries = readFileSync(join(configDir, 'imports', name), 'utf8')
      .split('\n')
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as { type?: string; seq?: number }];
        } catch {
          return []; // the last line, half written
        }
      });
    const answered = new Set(entries.filter((e) => e.type === 'chunk').map((e) => e.seq));
    const first = entries.findIndex((e) => e.type === 'chunk');
    if (first >= 0 && entries.slice(first).some((e) => e.type === 'sent' && !answered.has(e.seq))) return true;
  }
  return false;
}
