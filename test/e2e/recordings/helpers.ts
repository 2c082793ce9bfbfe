// The recordings end-to-end suites drive the command functions in-process against a real sandbox
// over loopback, with the real HTTP client and the real clock (short windows and TTLs keep every
// wait well under a second).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { systemClock, type Clock } from '../../../src/http/clock.js';
import { createClient, type CrmHttpClient } from '../../../src/http/client.js';
import { Pacer } from '../../../src/http/pacer.js';
import type { HttpClient } from '../../../src/http/types.js';
import type { RunningSandbox, SandboxOptions } from '../../../src/sandbox/index.js';
import { fakeCtx, type FakeCtx, type FakeCtxOptions } from '../../helpers/fake-ctx.js';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';

export interface LogEntry {
  index: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  status: number | null;
  fault?: string | null;
  /** the listener that got it: the API's origin or the transcript download origin */
  listener?: 'api' | 'download';
}

export interface RecordingsSandbox {
  readonly sb: RunningSandbox;
  /** a fresh client (its own pacer, so one test's window never leaks into the next) */
  client(opts?: { maxRetries?: number }): CrmHttpClient;
  ctx(options?: { client?: HttpClient } & FakeCtxOptions): FakeCtx;
  control(pathname: string, body?: unknown): Promise<any>;
  /** the request log from `since` on */
  requests(since?: number): Promise<LogEntry[]>;
  /** where the log ends now */
  mark(): Promise<number>;
  /** every recording, as listed */
  recordings(): Promise<Array<Record<string, any>>>;
  tmpDir(): string;
}

// The real clock but a short backoff (a tenth of the jitter's range): a retry still waits, and the
// backoff's own rules are the unit tests' (test/unit/http/retry*.test.ts).
const quickBackoff: Clock = { ...systemClock, random: () => Math.random() / 10 };

export function useRecordingsSandbox(options: SandboxOptions = {}): RecordingsSandbox {
  let t: TestSandbox | undefined;
  const clients: CrmHttpClient[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    t = await startTestSandbox({ seed: 1, rateLimit: 1_000_000, orgRateLimit: 1_000_000, ...options });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await t?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  const handle: RecordingsSandbox = {
    get sb() {
      if (!t) throw new Error('sandbox not started');
      return t.sb;
    },
    client(opts) {
      const c = createClient({
        baseUrl: handle.sb.baseUrl,
        apiKey: handle.sb.keys.admin,
        authHeader: 'x-api-key',
        clock: quickBackoff,
        ...(opts?.maxRetries === undefined ? {} : { maxRetries: opts.maxRetries }),
        // a pacer of its own: the process-wide one would carry one test's window into the next
        pacer: new Pacer(systemClock),
      });
      clients.push(c);
      return c;
    },
    ctx(opts = {}) {
      const { client, ...rest } = opts;
      // the client takes --max-retries from the globals, as the CLI's does (its retry policy covers downloads)
      const c = client ?? handle.client({ maxRetries: rest.globals?.maxRetries });
      return fakeCtx({
        clock: systemClock,
        globals: { output: 'json' },
        ...rest,
        client: async () => c,
      });
    },
    control(pathname, body) {
      if (!t) throw new Error('sandbox not started');
      return t.control(pathname, body) as Promise<any>;
    },
    async requests(since = 0) {
      return (await handle.control(`/requests?since=${since}`)) as LogEntry[];
    },
    async mark() {
      const stats = (await handle.control('/stats')) as { requests: number };
      return stats.requests;
    },
    async recordings() {
      const out: Array<Record<string, any>> = [];
      let cursor: string | null = null;
      for (;;) {
        const url = new URL(`${handle.sb.baseUrl}/recordings`);
        url.searchParams.set('limit', '100');
        if (cursor) url.searchParams.set('cursor', cursor);
        const res = await fetch(url, { headers: { 'x-service-api-key': handle.sb.keys.admin } });
        const body = (await res.json()) as any;
        out.push(...body.data);
        if (!body.page_info.has_next_page) return out;
        cursor = body.page_info.end_cursor;
      }
    },
    tmpDir() {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-rec-e2e-'));
      dirs.push(d);
      return d;
    },
  };
  return handle;
}

/** Wraps a client so that a test can act on each `GET /recordings/{id}` (e.g. let its link expire). */
export function interceptRecordingGets(
  client: HttpClient,
  after: (id: string, nth: number) => Promise<void> | void,
): HttpClient & { gets: Map<string, number> } {
  const gets = new Map<string, number>();
  return {
    get baseUrl() {
      return client.baseUrl;
    },
    get stats() {
      return client.stats;
    },
    gets,
    paginate: (p, o) => client.paginate(p, o),
    pages: (p, o) => client.pages(p, o),
    getLink: (url, o) => client.getLink(url, o),
    retry: (attempt, o) => client.retry(attempt, o),
    waits: client.waits,
    async request(opts) {
      const res = await client.request(opts);
      const m = /^\/recordings\/([^/?]+)$/.exec(opts.path);
      if (m && opts.method === 'GET') {
        const id = decodeURIComponent(m[1]!);
        const nth = (gets.get(id) ?? 0) + 1;
        gets.set(id, nth);
        await after(id, nth);
      }
      return res;
    },
  } as HttpClient & { gets: Map<string, number> };
}

export const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Files in `dir` that are not finished transcripts (temp files). */
export function leftovers(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => !f.endsWith('.json') || f.startsWith('.')) : [];
}
