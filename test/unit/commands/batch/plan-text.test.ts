// The plan a reconcile shows before it sends (CONTRACT §7b): its counts, what a resumed job's rows are (issue 27), and
// the least time at the rate limit in words a reader can say.
import { describe, expect, it } from 'vitest';
import { planLines, printPlan } from '../../../../src/commands/batch/plan-text.js';
import { deleteOperation, updateOperation } from '../../../../src/import/index.js';
import type { ImportSummary, MatchPlan } from '../../../../src/import/types.js';
import { fakeCtx } from '../../../helpers/fake-ctx.js';

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

  it('a server slower than its limit: the time at the pace the read took, said as an estimate (issue 29 re-trial)', () => {
    // 2 reads took 3 s: 1.5 s a request; 120 requests, 4 in flight: about 45 s, where the limit allows 0.6 s
    const slow = planLines(plan({ requests: 120, read_requests: 2, read_ms: 3000 }), 600, undefined, 4);
    expect(slow.at(-1)).toBe(
      "  requests to send: 120, under a second at the key's rate limit; about 45 s at the 1.5 s a request took in the read, 4 in flight",
    );
    // a fast server, or the limit the longer: the limit's least alone
    expect(planLines(plan({ read_ms: 40 }), 31_000).at(-1)).toBe(
      "  requests to send: 60, at least 31 s at the key's rate limit",
    );
    expect(planLines(plan({ read_ms: 3000 }), 600_000, undefined, 4).at(-1)).toBe(
      "  requests to send: 60, at least 10 min at the key's rate limit",
    );
  });

  it('a line pasted twice is a repeated row, skipped (issue 29); a key with other values is a duplicate', () => {
    const lines = planLines(plan({ update: 0, unchanged: 2, repeated: 1, duplicate: 1, requests: 0, changes: {} }), 0);
    expect(lines).toContain('  repeated           1  repeating an earlier row exactly: skipped');
    expect(lines).toContain("  duplicate          1  rows sharing a key, with other values: none of the key's sent");
    expect(lines.at(-1)).toBe('  nothing to send');
    expect(planLines(plan(), 0).some((l) => l.trimStart().startsWith('repeated'))).toBe(false);
  });
});

describe('the dry run of a create or an update (issue 28, 29)', () => {
  const summary = (o: { operation?: ImportSummary['operation']; type?: string } = {}): ImportSummary =>
    ({
      resource: 'contacts',
      operation: o.operation,
      plan: {
        ...{ rows: 12_345, valid: 12_340, invalid: 5, repeated: 1_200, chunks: 112, chunk_size: 100 },
        ...{ concurrency: 4, finished_chunks: 0, first_invalid: [], first_requests: [] },
        mapping: [
          { column: 'email', field: 'email', type: o.type ?? 'string', ignored: false, read_only: false },
          { column: 'id', field: null, type: 'string', ignored: true, read_only: true },
        ],
      },
    }) as unknown as ImportSummary;
  const shown = async (s: ImportSummary, read = false): Promise<string> => {
    const ctx = fakeCtx({ stdoutTTY: true, columns: 80 });
    await printPlan(ctx, s, read);
    return ctx.stdoutText();
  };

  it('says text columns may be sent typed by what the records hold (the dry run reads nothing to know)', async () => {
    expect(await shown(summary())).toContain('Text columns: a cell written as JSON writes a value');
    expect(await shown(summary({ operation: updateOperation('contacts') }))).toContain('Text columns:');
    // a typed column, or a delete, sends no text cell
    expect(await shown(summary({ type: 'number' }))).not.toContain('Text columns:');
    expect(await shown(summary({ operation: deleteOperation('contacts') }))).not.toContain('Text columns:');
  });

  it('says whether this plan read the records the run types its cells by (with a key) or could not', async () => {
    expect(await shown(summary(), true)).toContain('this plan read the page of records the run reads');
    expect(await shown(summary())).toContain('one page is read when it runs, which this plan could not');
  });

  it('counts with thousands separators', async () => {
    expect(await shown(summary())).toContain(
      '12,345 rows: 12,340 valid, 5 invalid, 1,200 repeating an earlier row (skipped)',
    );
  });
});

describe('a dry run of a delete says what the run will cost (issue 29 re-trial: 80 requests said, 160 sent)', () => {
  it('the cost line is printed, and a delete counts DELETEs', async () => {
    const ctx = fakeCtx({ stdoutTTY: true, columns: 200 });
    const s = {
      resource: 'contacts',
      operation: deleteOperation('contacts'),
      plan: {
        ...{ rows: 80, valid: 80, invalid: 0, repeated: 0, chunks: 80, chunk_size: 1 },
        ...{ concurrency: 4, finished_chunks: 0, first_invalid: [], first_requests: [] },
      },
    } as unknown as ImportSummary;
    await printPlan(ctx, s, false, 'It would cost 160 requests in all (80 GETs and 80 DELETEs): …');
    const out = ctx.stdoutText();
    expect(out).toContain('would delete 80 (contacts): 80 DELETEs, 4 in flight');
    expect(out).toContain('It would cost 160 requests in all (80 GETs and 80 DELETEs)');
    expect(out).toContain("Valid is crm's check; the server's own");
  });
});
