// The sandbox's options, running handle, keys, faults, and the response every handler returns.
import type { ResourceName } from '../api/resources.js';
import type { LimitKind, ResetFormat, RetryAfterFormat } from './rate-limiter.js';

export const FAULT_KINDS = [
  '500',
  '500-after-write',
  'drop',
  'drop-after-write',
  'html-502',
  '429',
  'truncated',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
export type FaultRates = Partial<Record<FaultKind, number>>;

/** An API key the sandbox accepts; version 1 keys ignore `scopes` (full access). */
export interface KeyDef {
  key: string;
  version: 1 | 2;
  scopes: string[];
  access: 'organization' | 'user';
  user: string;
}

export type SandboxKeys = Record<'admin' | 'readonly' | 'user' | 'v1', string>;

/** docs/sandbox.md names each; the limits and formats are also changeable through /__sandbox/limits. */
export interface SandboxOptions {
  host?: string;
  port?: number;
  seed?: number;
  /** how many sample records of these resources (the others as `seed`'s); seeds with `seed ?? 0` */
  seedRecords?: Partial<Record<ResourceName, number>>;
  dataFile?: string;
  /** serve the records of a `crm snapshot` folder (docs/sandbox.md, "Serving a snapshot") */
  from?: string;
  keysFile?: string;
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
  /** serve `/__sandbox/*` (default true; loopback only) */
  control?: boolean;
  v1InteractionsCursor?: boolean;
  /** the transcript download listener's port (default 0: a free one) */
  downloadPort?: number;
  /** the shape of the key and organization windows (default fixed) */
  rateLimitKind?: LimitKind;
  rateResetFormat?: ResetFormat;
  retryAfterFormat?: RetryAfterFormat;
  /** https, with a CA made at start written to `caFile` (removed by close()) */
  tls?: boolean;
  saveDelayMs?: number;
  now?: () => number;
  /** random source in [0, 1) for faults */
  random?: () => number;
}

export interface RunningSandbox {
  /** the origin, e.g. http://127.0.0.1:4010 */
  url: string;
  baseUrl: string;
  v1BaseUrl: string;
  controlUrl?: string;
  /** the transcript links' origin (another port) */
  downloadUrl: string;
  keys: SandboxKeys;
  /** with `tls`: the CA certificate (PEM), for NODE_EXTRA_CA_CERTS */
  caFile?: string;
  /** with `from`: what to tell the user (an incomplete snapshot, counts unlike the manifest's) */
  warnings: string[];
  close(): Promise<void>;
}

/** What a handler answers: a JSON `body`, or `raw` text (HTML 502, truncated JSON). */
export interface SandboxResponse {
  status: number;
  headers: Record<string, string>;
  body?: unknown;
  raw?: string;
}
