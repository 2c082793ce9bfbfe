// Starts `crm sandbox` as a child process for the benchmarks and resolves with its start-up line.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CRM = fileURLToPath(new URL('../bin/crm', import.meta.url));

export function startSandboxChild(args = [], { banner = false } = {}) {
  const child = spawn(process.execPath, [CRM, 'sandbox', '--port', '0', ...args], { stdio: ['ignore', 'pipe', banner ? 'inherit' : 'ignore'] });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => {
      const info = JSON.parse(line);
      resolve({
        ...info,
        child,
        stop: () =>
          new Promise((done) => {
            child.once('exit', done);
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => reject(new Error(`sandbox exited early with ${code}`)));
  });
}
