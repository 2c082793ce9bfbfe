// The shape of the HTTP core as the rest of crm sees it. src/http/client.ts implements it.
import type { ApiRecord } from '../api/envelopes.js';
import type { CrmError } from './errors.js';
import type { PaceInfo } from './pace-info.js';
import type { Pacer, PacerTicket } from './pacer.js';
import type { HttpMethod } from './retry.js';
import type { Clock } from './clock.js';

export type { Clock, HttpMethod, PaceInfo };
export type AuthHeaderKind = 'x-api-key' | 'bearer';
/** which envelope a response must have: checked with zod (CONTRACT §4) */
export type Expect = 'success' | 'list' | 'batch' | 'v2' | 'v1';

export interface ClientConfig {
  /** the version 2 (or, for a v1 client, version 1) root, e.g. http://127.0.0.1:4010/api/v2 */
  baseUrl: string;
  apiKey: string;
  /** other keys to mask in what the server sends (the profile's other key) */
  redactKeys?: ReadonlyArray<string | undefined>;
  authHeader: AuthHeaderKind;
  /** per request, default 30 000 */
  timeoutMs?: number;
  /** default 5 */
  maxRetries?: number;
  clock?: Clock;
  /** one line per request for --verbose; never the key. `notice`: a sentence for a person (a wait), which a terminal may wrap; a request line is kept whole */
  log?: (line: string, notice?: boolean) => void;
  /** said even without --verbose (unless --quiet): waits of several seconds */
  notice?: (line: string) => void;
  /** how long one request may wait out 429s with Retry-After, in all (default 10 minutes) */
  rateLimitBudgetMs?: number;
  /** the command has --concurrency: the 429 hints suggest lowering it */
  concurrencyFlag?: boolean;
  /** default: the process's one for this origin and key */
  pacer?: Pacer;
  signal?: AbortSignal;
}

export interface RequestOptions {
  method: HttpMethod;
  /** relative to baseUrl (`/contacts/con_1`), may carry a query string */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** the body already written as JSON, sent as it is instead of `body` (a batch chunk, serialised once for its key) */
  bodyJson?: string;
  /** a key to send; `true` makes a random UUID, reused by every retry of this request */
  idempotencyKey?: string | true;
  expect?: Expect;
  signal?: AbortSignal;
  /** once sent, finish the retries even after Ctrl-C: only a later answer tells whether a write was applied (the import's journal) */
  finishInDoubt?: boolean;
  /**
   * Runs once the pacer has admitted the request, just before it is sent (each attempt): what must be on
   * disk before the request goes (a delete's backup line), and not before a wait it might never end.
   * It makes no request. When it throws, nothing is sent.
   */
  beforeSend?: () => Promise<void>;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T;
  requestId?: string;
  /** how many times it was retried */
  retries: number;
  /** a DELETE answered 404 on a retry: an earlier, lost attempt deleted it (success; `body.data` null) */
  goneOnRetry?: boolean;
}

export interface PaginateOptions {
  query?: Record<string, string | number | boolean | undefined>;
  /** page size sent as `limit` */
  limit?: number;
  cursor?: string;
  /** stop after this many records */
  max?: number;
  signal?: AbortSignal;
}

export interface Page {
  data: ApiRecord[];
  endCursor: string | null;
  hasNextPage: boolean;
  /** records were left out (beyond `max`): the end cursor would skip them */
  cut?: boolean;
}

/** What commands use to talk to the API (implemented by src/http/client.ts). */
export interface HttpClient {
  readonly baseUrl: string;
  readonly stats: { requests: number; retries: number };
  /** the client's notice of long waits, for waits made beside it (a transcript's download slot) */
  readonly waits?: { note(ms: number, why: string): void };
  request<T = unknown>(opts: RequestOptions): Promise<ApiResponse<T>>;
  /** every record of a list endpoint, one page in memory at a time; stops early when the loop breaks */
  paginate(path: string, opts?: PaginateOptions): AsyncGenerator<ApiRecord, void, undefined>;
  /** the pages themselves, for commands that print a page and hint at the next */
  pages(path: string, opts?: PaginateOptions): AsyncGenerator<Page, void, undefined>;
  /** one GET of an absolute link the API handed out (a transcript), never with the key (link.ts) */
  getLink(url: string, opts: LinkOptions): Promise<Tried<LinkAnswer>>;
  /** the client's retry policy around the caller's attempts; `signal` stops the waits, `pacer` is held back by a 429 */
  retry<T>(attempt: (n: number) => Promise<Tried<T>>, opts?: { pacer?: Pacer; signal?: AbortSignal }): Promise<T>;
  /** what the pacer knows of the rate limit now, read-only (pace-info.ts); optional so test doubles may leave it out */
  pace?(): PaceInfo;
}

/** One attempt that did not succeed: the error it would end with, and what the retry rules read. */
export interface Failure {
  error: CrmError;
  status?: number;
  /** a transport error code (ECONNRESET, ETIMEDOUT, …) or TRUNCATED_BODY */
  errorCode?: string;
  /** the Retry-After header as sent */
  retryAfter?: string;
  /** the answer's Date header: the server's clock, which a Retry-After date is read against */
  serverDate?: string;
}

/** What an attempt gives the retry layer (retry-loop.ts). */
export type Tried<T> = { ok: true; value: T } | { ok: false; failure: Failure };

export interface LinkOptions {
  /** what the link holds, in messages: `transcript` */
  what: string;
  /** refuse bodies larger than this; default MAX_TRANSCRIPT_BYTES (link.ts) */
  maxBytes?: number;
  /** the link endpoint's own pacer, and a slot of it the caller took (a unit that also gets the link) */
  pacer?: Pacer;
  ticket?: PacerTicket;
  /** stops the wait for the pacer */
  stop?: AbortSignal;
  /** cancels the request in flight */
  signal?: AbortSignal;
}

/** A JSON object or array, or `gone` (404/410: the link expired; get a fresh one). */
export type LinkAnswer = { body: object } | { gone: number };
