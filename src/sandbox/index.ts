// The sandbox's programmatic entry: `startSandbox(options)` serves the whole API on loopback
// (docs/sandbox.md). `crm sandbox` (src/commands/sandbox/run.ts) and the tests use it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { AutoSaver, loadDataFile } from './data-file.js';
import { builtinKeys, loadKeysFile } from './keys.js';
import { isLoopback, createSandboxServer } from './server.js';
import { loadSnapshotDir } from './snapshot-dir.js';
import { createState, type SandboxState } from './state.js';
import { makeSandboxTls } from './tls-cert.js';
import type { RunningSandbox, SandboxOptions } from './types.js';

// what `crm sandbox` needs to check its flags before starting
export { parseFaultSpec } from './faults.js';
export { parseSeedRecords } from './seed.js';
export { loadKeysFile } from './keys.js';
export { LIMIT_KINDS, RESET_FORMATS, RETRY_AFTER_FORMATS } from './rate-limiter.js';
export type { RunningSandbox, SandboxOptions } from './types.js';

/** Listens; resolves to the origin (`scheme://host:port`). */
function listen(server: Server, port: number, host: string, scheme: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(`${scheme}://${host.includes(':') ? `[${host}]` : host}:${(server.address() as AddressInfo).port}`);
    });
  });
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections());

/** Loads `--data-file` into the state and saves it after every change (undefined without one). */
function openDataFile(state: SandboxState, path: string | undefined, delayMs = 2000): AutoSaver | undefined {
  if (!path) return undefined;
  const saved = loadDataFile(path);
  if (saved) {
    state.store.restore(saved);
    state.idempotency.restore(saved.idempotency ?? []);
  }
  const saver = new AutoSaver(
    path,
    () => ({ ...state.store.snapshot(), idempotency: state.idempotency.snapshot() }),
    delayMs,
  );
  state.store.onChange = state.idempotency.onChange = () => saver.changed();
  return saver;
}

/** Starts the sandbox; rejects (before listening) on a malformed keys file, data file or snapshot (`from`). */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const keyDefs = [
    ...builtinKeys(options.seed),
    ...(options.keysFile ? loadKeysFile(options.keysFile) : []),
    ...(options.extraKeys ?? []),
  ];
  const from = options.from === undefined ? undefined : loadSnapshotDir(options.from);
  const state = createState(options, keyDefs, from?.store, from?.transcripts);
  const saver = openDataFile(state, options.dataFile, options.saveDelayMs);
  const host = options.host ?? '127.0.0.1';
  // The control endpoint exists only on loopback and only when turned on.
  const control = (options.control ?? true) && isLoopback(host);
  // --tls: one certificate for both listeners, for every loopback name (and the listening address)
  const tls = options.tls ? makeSandboxTls([...new Set(['localhost', '127.0.0.1', '::1', host])]) : undefined;
  const cert = tls && { key: tls.keyPem, cert: tls.certPem };
  const scheme = tls ? 'https' : 'http';
  const server = createSandboxServer(state, control, 'api', cert);
  const url = (state.origin = await listen(server, options.port ?? 4010, host, scheme));
  // Transcript links live on a second origin (another port, same host), which never sees a key.
  const downloads = createSandboxServer(state, false, 'download', cert);
  state.downloadOrigin = await listen(downloads, options.downloadPort ?? 0, host, scheme).catch(
    async (err: unknown) => {
      await closeServer(server);
      throw err;
    },
  );
  const caDir = tls && mkdtempSync(join(tmpdir(), 'crm-sandbox-tls-'));
  if (caDir) writeFileSync(join(caDir, 'ca.pem'), tls.caPem);
  let closing: Promise<void> | undefined;
  const close = async () => {
    await Promise.all([closeServer(server), closeServer(downloads)]);
    if (caDir) rmSync(caDir, { recursive: true, force: true });
    await saver?.close();
  };
  const [admin, readonly, user, v1] = keyDefs.map((d) => d.key);
  return {
    url,
    baseUrl: `${url}/api/v2`,
    v1BaseUrl: `${url}/api/v1`,
    controlUrl: control ? `${url}/__sandbox` : undefined,
    downloadUrl: state.downloadOrigin,
    keys: { admin: admin!, readonly: readonly!, user: user!, v1: v1! },
    caFile: caDir && join(caDir, 'ca.pem'),
    warnings: from?.warnings ?? [],
    close: () => (closing ??= close()),
  };
}
