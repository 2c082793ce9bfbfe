// The one sandbox starter of the tests: in this process, on a free loopback port, with the control
// endpoint; startTestSandbox adds the environment that points `crm` at it with one of its keys and a
// throw-away config folder.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch as fetchWith } from 'undici';
import { startSandbox as start, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.js';

/** controlUrl is typed as present: every test sandbox has it but the one testing `control: false`. */
export type Sandbox = RunningSandbox & { controlUrl: string };

export async function startSandbox(options: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  return (await start({ port: 0, host: '127.0.0.1', control: true, ...options })) as Sandbox;
}
export type KeyName = 'admin' | 'readonly' | 'user' | 'v1';

export interface TestSandbox {
  sb: Sandbox;
  configDir: string;
  /** env for `crm` with the named v2 key (and the v1 key), base URLs and the temp config folder */
  env(key?: KeyName, extra?: Record<string, string | undefined>): Record<string, string | undefined>;
  /** POST to the control endpoint */
  control(path: string, body?: unknown): Promise<unknown>;
  /** contacts whose email starts with `tag.`, each email → how many records have it (duplicates show as 2+) */
  countByEmail(tag: string): Promise<Map<string, number>>;
  close(): Promise<void>;
}

export async function startTestSandbox(options: Partial<SandboxOptions> = {}): Promise<TestSandbox> {
  const sb = await startSandbox(options);
  const configDir = mkdtempSync(join(tmpdir(), 'crm-test-config-'));
  // a sandbox serving https (`tls`) is reached with its own CA, as crm reaches it with NODE_EXTRA_CA_CERTS
  const tlsAgent = sb.caFile ? new Agent({ connect: { ca: readFileSync(sb.caFile, 'utf8') } }) : undefined;
  const fetch = (url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    tlsAgent ? fetchWith(url, { ...init, dispatcher: tlsAgent }) : globalThis.fetch(url, init);
  return {
    sb,
    configDir,
    env(key = 'admin', extra = {}) {
      return {
        CRM_BASE_URL: sb.baseUrl,
        CRM_V1_BASE_URL: sb.v1BaseUrl,
        CRM_API_KEY: key === 'v1' ? sb.keys.v1 : sb.keys[key],
        CRM_V1_API_KEY: sb.keys.v1,
        CRM_CONFIG_DIR: configDir,
        ...extra,
      };
    },
    async control(path, body) {
      const res = await fetch(`${sb.controlUrl}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`control ${path}: HTTP ${res.status} ${await res.text()}`);
      return res.json();
    },
    async countByEmail(tag) {
      const counts = new Map<string, number>();
      let cursor: string | null = null;
      for (;;) {
        const url = `${sb.baseUrl}/contacts?limit=100${cursor ? `&cursor=${cursor}` : ''}`;
        const res = await fetch(url, { headers: { 'X-Service-Api-Key': sb.keys.admin } });
        const body = (await res.json()) as {
          data: Array<{ email: string }>;
          page_info: { end_cursor: string | null; has_next_page: boolean };
        };
        for (const c of body.data)
          if (c.email.startsWith(`${tag}.`)) counts.set(c.email, (counts.get(c.email) ?? 0) + 1);
        if (!body.page_info.has_next_page) return counts;
        cursor = body.page_info.end_cursor;
      }
    },
    async close() {
      await tlsAgent?.close();
      await sb.close();
      rmSync(configDir, { recursive: true, force: true });
    },
  };
}
