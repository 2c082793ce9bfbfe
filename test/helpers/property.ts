// Settings for fast-check property tests: deterministic runs (the seed is FC_SEED when set, else
// fixed), so a failure is the same on every machine; fast-check's failure report prints the seed
// and the counterexample's path to replay it (FC_SEED=<seed>).
import type { Parameters } from 'fast-check';

const SEED = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : 0x5eed;

export function runs<T>(numRuns = 300): Parameters<T> {
  return { seed: SEED, numRuns };
}
