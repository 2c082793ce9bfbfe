// What every command receives besides its own options: IO streams, environment, global options,
// a clock, an abort signal, and lazy providers for the profile and HTTP clients. Commands never
// reach for process.* or globals, so tests run them in-process with fake IO.
import type { ResolvedProfile } from '../config/types.js';
import type { Clock, HttpClient } from '../http/types.js';
import type { OutputFormat } from '../output/format.js';

export interface IO {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
}

export interface GlobalOptions {
  profile?: string;
  baseUrl?: string;
  v1BaseUrl?: string;
  /** as given with -o; Ctx.format() applies the default */
  output?: OutputFormat;
  fields?: string[];
  /** colours on standard output (a terminal, no --no-color or NO_COLOR) */
  color: boolean;
  /** colours on standard error: the same, with standard error the terminal (`2> file` has none) */
  stderrColor: boolean;
  /** --wide: tables show every column uncut, even wider than the terminal */
  wide?: boolean;
  quiet: boolean;
  verbose: boolean;
  timeoutMs: number;
  maxRetries: number;
}

export interface Ctx {
  io: IO;
  env: Record<string, string | undefined>;
  globals: GlobalOptions;
  clock: Clock;
  /** aborted on the first Ctrl-C: stop starting work, finish what is in flight */
  signal: AbortSignal;
  /** the config folder (CRM_CONFIG_DIR or conf's default) */
  configDir(): string;
  /** the active profile after precedence; loads conf only when flags and environment do not suffice */
  profile(): Promise<ResolvedProfile>;
  /** The profile's client (AuthError without a key); `key`: another key to that root (keys-check); `concurrencyFlag`: hints may suggest --concurrency */
  client(opts?: { v1?: boolean; key?: string; concurrencyFlag?: boolean }): Promise<HttpClient>;
  /** -o, else table when stdout is a TTY, json otherwise */
  format(): OutputFormat;
  /** true when both stdin and stdout are TTYs: prompts are allowed */
  interactive(): boolean;
  /** a notice or warning on stderr, unless --quiet */
  warn(message: string): void;
}
