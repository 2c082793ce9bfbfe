// The sandbox's programmatic entry: `startSandbox(options)` serves the whole API on loopback
// (docs/sandbox.md). `crm sandbox` (src/commands/sandbox/run.ts) and the tests use it.
import type { AddressInfo } from 'node:net';
import { AutoSaver, loadDataFile } from './data-file.js';
import { builtinKeys, loadKeysFile, namedKeys } from './keys.js';
import { isLoopback, createSandboxServer } from './server.js';
import { DEFAULTS, createState } from './state.js';
import type { RunningSandbox, SandboxOptions } from './types.js';

export { parseFaultSpec } from './faults.js';
export { loadKeysFile, validateKeys } from './keys.js';
export { DEFAULTS } from './state.js';
export type { FaultKind, FaultRates, KeyDef, RunningSandbox, SandboxKeys, SandboxOptions } from './types.js';
export { FAULT_KINDS } from './types.js';

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Starts the sandbox; rejects (before listening) on a malformed keys file or data file. */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const keyDefs = [...builtinKeys(options.seed), ...(options.keysFile ? loadKeysFile(options.keysFile) : []), ...(options.extraKeys ?? [])];
  const state = createState(options, keyDefs);
  let saver: AutoSaver | undefined;
  if (options.dataFile) {
    const snapshot = loadDataFile(options.dataFile);
    if (snapshot) state.store.restore(snapshot);
    saver = new AutoSaver(options.dataFile, () => state.store.snapshot(), options.saveDelayMs ?? 2000);
    const s = saver;
    state.store.onChange = () => s.changed();
  }

  const host = options.host ?? DEFAULTS.host;
  // The control endpoint exists only on loopback and only when turned on.
  const control = (options.control ?? true) && isLoopback(host === 'localhost' ? '127.0.0.1' : host);
  const server = createSandboxServer(state, control);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULTS.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${hostForUrl(host)}:${port}`;
  state.origin = url;

  let closing: Promise<void> | undefined;
  return {
    url,
    baseUrl: `${url}/api/v2`,
    v1BaseUrl: `${url}/api/v1`,
    controlUrl: control ? `${url}/__sandbox` : undefined,
    keys: namedKeys(keyDefs),
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await saver?.flush();
      })();
      return closing;
    },
  };
}
