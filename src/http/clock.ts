// The real clock. Everything that waits takes a Clock, so tests inject a fake one and never sleep.
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from './types.js';

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    if (ms <= 0) {
      signal?.throwIfAborted();
      return;
    }
    await delay(ms, undefined, signal ? { signal } : undefined);
  },
  random: () => Math.random(),
};
