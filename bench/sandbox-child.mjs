// Starts `crm sandbox` as a child process for the benchmarks and resolves with its start-up line.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CRM = fileURLToPath(new URL('../bin/crm', import.meta.url));

/** `port` 0 picks a free one; a restart passes the port of the first start (with the same seed, keys and cursors stay valid). */
export function startSandboxChild(args = [], { banner = false, port = 0 } = {}) {
  const child = spawn(process.execPath, [CRM, 'sandbox', '--port', String(port), ...args], {
    stdio: ['ignore', 'pipe', banner ? 'inherit' : 'ignore'],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const info = JSON.parse(line);
      resolve({
        ...info,
        child,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', done);
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited early with ${code}`)));
  });
}

/** A sandbox with control, limited to `limit` requests per key per `windowMs` (the organization's limit out of the way). */
export function startLimitedSandbox(limit, windowMs) {
  return startSandboxChild([
    '--seed',
    '1',
    '--control',
    '--rate-limit',
    String(limit),
    '--rate-window-ms',
    String(windowMs),
    '--org-rate-limit',
    '1000000000',
  ]);
}
