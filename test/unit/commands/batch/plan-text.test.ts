// The plan a reconcile shows before it sends (CONTRACT §7b): its counts, what a resumed job's rows are (issue 27), and
// the least time at the rate limit in words a reader can say.
import { describe, expect, it } from 'vitest';
import { planLines } from '../../../../src/commands/batch/plan-text.js';
import type { MatchPlan } from '../../../../src/import/types.js';

const plan = (o: Partial<MatchPlan> = {}): MatchPlan => ({
  resource: 'contacts',
  rows: 60,
  read: 'listed 200 records in 2 requests, under a second',
  ...{ create: 0, update: 60, unchanged: 0, ambiguous: 0, duplicate: 0, repeated: 0, invalid: 0 },
  ...{ requests: 60, read_requests: 2, changes: { title: 60 } },
  ...o,
});

describe('the plan shown before a reconcile sends', () => {
  it('a first run: no done row, no note on creates; the least time in seconds or minutes', () => {
    const lines = planLines(plan(), 31_000);
    expect(lines.some((l) => l.trimStart().startsWith('done'))).toBe(false);
    expect(lines).toContain('  update            60  title 60');
    expect(lines.at(-1)).toBe("  requests to send: 60, at least 31 s at the key's rate limit");
    expect(planLines(plan(), 600_000).at(-1)).toBe("  requests to send: 60, at least 10 min at the key's rate limit");
  });

  it('under a second is said so (not "at least under a second")', () => {
    expect(planLines(plan(), 200).at(-1)).toBe("  requests to send: 60, under a second at the key's rate limit");
  });

  it('a resumed job: rows the interrupted run did and the CRM holds are done; creates it left in doubt are named', () => {
    const lines = planLines(
      plan({ create: 140, resent: 30, done: 10, update: 0, changes: {}, requests: 14 }),
      undefined,
    );
    expect(lines).toContain("  create           140  30 sent again under the interrupted run's keys");
    expect(lines).toContain('  done              10  by the interrupted run (the CRM agrees): no request');
    // each count's line fits 80 columns (the first, the read, is wrapped on a terminal)
    for (const l of lines.slice(1)) expect(l.length).toBeLessThanOrEqual(80);
  });

  it('a line pasted twice is a repeated row, skipped (issue 29); a key with other values is a duplicate', () => {
    const lines = planLines(plan({ update: 0, unchanged: 2, repeated: 1, duplicate: 1, requests: 0, changes: {} }), 0);
    expect(lines).toContain('  repeated           1  repeating an earlier row exactly: skipped');
    expect(lines).toContain('  duplicate          1  an earlier row has the key, with other values: not sent');
    expect(lines.at(-1)).toBe('  nothing to send');
    expect(planLines(plan(), 0).some((l) => l.trimStart().startsWith('repeated'))).toBe(false);
  });
});
