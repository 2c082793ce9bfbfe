// A big reconcile asks first on a terminal, as a delete does (issue 29, "Big changes ask first"):
// src/commands/batch/operation.ts confirmPlan. Scripts (no terminal) and --yes are never asked.
import { describe, expect, it } from 'vitest';
import { ASK_FROM_WRITES, confirmPlan } from '../../../../src/commands/batch/operation.js';
import { fakeCtx } from '../../../helpers/fake-ctx.js';

const o = { resource: 'contacts' };
const terminal = (stdin: string) => fakeCtx({ stdin, stdinTTY: true, stderrTTY: true, stdoutTTY: true });

describe('batch --match: a plan of many writes asks first on a terminal', () => {
  it('asks about 100 writes, naming the creates and updates; y or yes sends', async () => {
    for (const answer of ['y', 'yes', 'YES']) {
      const ctx = terminal(`${answer}\n`);
      await confirmPlan(ctx, o, { create: 60, update: 40 });
      expect(ctx.stderrText()).toContain('This will create 60 contacts and update 40 contacts. Send? [y/N]');
    }
  });

  it("names a records file's links too (the trial: 150 deals asked, and the ~290 links not said)", async () => {
    const ctx = terminal('y\n');
    await confirmPlan(ctx, { resource: 'deals' }, { create: 150, update: 0 }, ['contacts', 'companies']);
    expect(ctx.stderrText()).toContain(
      'This will create 150 deals, then link them to contacts and companies as the file says. Send? [y/N]',
    );
  });

  it('any other answer (or none) sends nothing: exit 2 saying so, with --yes as the way for scripts', async () => {
    for (const answer of ['', 'n', 'no', '100']) {
      const err = await confirmPlan(terminal(`${answer}\n`), o, { create: 0, update: 250 }).catch((e: Error) => e);
      expect(err).toMatchObject({ exitCode: 2 });
      expect((err as Error).message).toMatch(/^not confirmed.*: nothing was sent$/);
      expect((err as { hint?: string }).hint).toContain('--yes');
    }
  });

  it('asks nothing below the threshold, with --yes, or without a terminal', async () => {
    const cases = [
      [terminal(''), o, { create: ASK_FROM_WRITES - 1, update: 0 }],
      [terminal(''), { ...o, yes: true as const }, { create: 5000, update: 5000 }],
      [fakeCtx({ stdin: '' }), o, { create: 5000, update: 0 }],
    ] as const;
    for (const [ctx, opts, plan] of cases) {
      await confirmPlan(ctx, opts, plan);
      expect(ctx.stderrText()).toBe('');
    }
  });
});
