// Issue 20: the pacer against each shape of rate limiter the sandbox plays, end to end (crm batch,
// real loopback HTTP, the sandbox's own limiter): a fixed window, a sliding window whose Reset is
// the window whole again, and one whose Reset is only its oldest request leaving (the next unit
// free). Read as "whole again", that last Reset sent a window's units into a window that had freed
// one: 429s, each holding every request for its Retry-After. Behaviour only: no request refused, each
// row once; the time it takes is bench:pacing's business.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import type { LimitKind, ResetFormat } from '../../src/sandbox/rate-limiter.js';

let t: TestSandbox | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const shapes = (['fixed', 'sliding', 'sliding-oldest'] as const).flatMap((kind) =>
  (['seconds', 'delta'] as const).map((format) => [kind, format] as [LimitKind, ResetFormat]),
);

it.each(shapes)(
  '%s window, Reset as %s: an import of 4 windows meets no 429, each row once',
  async (kind, format) => {
    // 8 requests a second per key; each answer 30 ms after its request is counted, so a window's
    // requests are counted over some 60 ms, not at one instant
    const limits = {
      rateLimit: 8,
      orgRateLimit: 1000,
      rateWindowMs: 1000,
      rateLimitKind: kind,
      rateResetFormat: format,
    };
    t = await startTestSandbox({ ...limits, latencyMs: 30 });
    const dir = tempDir('crm-pacing-shapes-');
    const file = join(dir, 'rows.csv');
    const rows = 300; // 30 chunks of 10, and the column check: 31 requests, 4 windows
    writeFileSync(
      file,
      ['Email,First Name', ...Array.from({ length: rows }, (_, i) => `${kind}.${i}@pacing.example,R${i}`)].join('\n') +
        '\n',
    );
    const r = await runCrm(
      ['-q', '-o', 'json', 'batch', 'contacts', file, '--chunk-size', '10', '--concurrency', '4'],
      {
        env: t.env('admin'),
        timeoutMs: 60_000,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const log = (await t.control('/requests')) as Array<{ method: string; path: string; status?: number }>;
    expect(log.filter((e) => e.status === 429)).toEqual([]);
    await t.control('/limits', { rate_limit: 10_000 }); // the count below reads every page at once
    const counts = await t.countByEmail(kind);
    expect(counts.size).toBe(rows);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  },
  90_000,
);
