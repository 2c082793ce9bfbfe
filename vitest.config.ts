import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // a temporary folder for each file; a file that leaves a crm-* entry in it fails
    setupFiles: ['test/setup/tmp-guard.ts'],
    // vitest's default is one worker fewer than the cores: on CI's 2 cores, one file at a time. The
    // files mostly wait (on spawned crm processes, rate windows, timers), so 2 at a time run the
    // slowest six in 47 s instead of 71 s there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
