// Shared types of the sandbox: its options, the running handle, keys, faults and the
// internal response shape that every handler returns and the server serialises.
import type { ApiRecord } from '../api/envelopes.js';
import type { ResetFormat, RetryAfterFormat } from './rate-limiter.js';

export type { ResetFormat, RetryAfterFormat };

export const FAULT_KINDS = ['500', '500-after-write', 'drop', 'drop-after-write', 'html-502', '429', 'truncated'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type FaultRates = Partial<Record<FaultKind, number>>;

export type Access = 'organization' | 'user';

/** An API key the sandbox accepts (built in, or from `--keys FILE`). */
export interface KeyDef {
  key: string;
  version: 1 | 2;
  /** version 2 keys: explicit scopes; version 1 keys: ignored (full access) */
  scopes: string[];
  access: Access;
  user: string;
}

export interface SandboxKeys {
  admin: string;
  readonly: string;
  user: string;
  v1: string;
}

export interface SandboxOptions {
  host?: string;
  port?: number;
  seed?: number;
  dataFile?: string;
  /** path of a JSON array of more keys */
  keysFile?: string;
  /** more keys, given programmatically */
  extraKeys?: KeyDef[];
  rateLimit?: number;
  orgRateLimit?: number;
  rateWindowMs?: number;
  transcriptTtlMs?: number;
  downloadRateLimit?: number;
  downloadWindowMs?: number;
  failRate?: number;
  latencyMs?: number;
  faults?: FaultRates;
  /** a regular expression (source) narrowing which paths random faults apply to */
  faultPaths?: string;
  /** serve `/__sandbox/*` (default true for programmatic use) */
  control?: boolean;
  v1InteractionsCursor?: boolean;
  /** port of the transcript download listener (default 0: a free port); same host as the API */
  downloadPort?: number;
  /** `X-RateLimit-Reset` as seconds until the reset (`delta`, default) or a Unix time in seconds (`epoch`) */
  rateResetFormat?: ResetFormat;
  /** `Retry-After` as delta-seconds (`seconds`, default) or an HTTP-date (`date`) */
  retryAfterFormat?: RetryAfterFormat;
  /**
   * Serve https with a certificate made at start, signed by a CA made at start too; the CA is
   * written to `caFile` (a new temporary folder, removed by close()).
   */
  tls?: boolean;
  /** delay before the data file is saved after a change (default 2000 ms) */
  saveDelayMs?: number;
  /** injectable clock (ms since the epoch) */
  now?: () => number;
  /** injectable random source in [0, 1) for faults and ids */
  random?: () => number;
}

export interface RunningSandbox {
  /** the origin, e.g. http://127.0.0.1:4010 (https:// with `tls`) */
  url: string;
  baseUrl: string;
  v1BaseUrl: string;
  controlUrl?: string;
  /** the origin of the transcript download listener (another port): transcript links point here */
  downloadUrl: string;
  keys: SandboxKeys;
  /** with `tls`: the CA certificate's file (PEM), for NODE_EXTRA_CA_CERTS */
  caFile?: string;
  close(): Promise<void>;
}

/** What a handler answers; the server turns it into bytes. */
export interface SandboxResponse {
  status: number;
  headers: Record<string, string>;
  /** a JSON value, serialised by the server */
  body?: unknown;
  /** raw bytes instead of JSON (HTML 502, truncated JSON) */
  raw?: string;
}

export type { ApiRecord };
