// What the parts of `crm snapshot DIR` share (run.ts calls them one by one): the manifest and the run.
import type { HttpClient } from '../../http/types.js';
import type { Progress } from '../../output/progress.js';
import type { Ctx } from '../context.js';
import type { TranscriptsEntry } from './transcripts.js';

export interface LinksEntry {
  file: string;
  /** parents whose links were read */
  parents: number;
  records: number;
  /** parents deleted since their collection was read (404): skipped */
  parents_gone: number;
  complete: boolean;
}

export interface Manifest {
  base_url: string;
  started_at: string;
  finished_at: string | null;
  complete: boolean;
  collections: Record<string, { file: string; records: number; complete: boolean }>;
  links?: Record<string, LinksEntry>;
  /** with --transcripts (transcripts.ts) */
  transcripts?: TranscriptsEntry;
  left_out: Array<{ what: string; reason: string }>;
}

/** What every part of a run shares. */
export interface SnapshotRun {
  dir: string;
  client: HttpClient;
  ctx: Ctx;
  manifest: Manifest;
  /** the manifest of an earlier run in DIR */
  earlier: Manifest | undefined;
  /** writes the manifest (atomically) */
  save(): Promise<void>;
  /** runs `f` with a progress line on a terminal (none otherwise), cleared when `f` ends */
  withProgress<T>(f: (progress: Progress) => Promise<T>): Promise<T>;
}
