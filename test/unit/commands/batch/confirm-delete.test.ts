// A batch delete's confirmation (src/commands/batch/operation.ts confirmDelete): a rerun after an
// interruption asks about the rows left, and the number to type is theirs.
import { describe, expect, it } from 'vitest';
import { confirmDelete } from '../../../../src/commands/batch/operation.js';
import { fakeCtx } from '../../../helpers/fake-ctx.js';

const o = { resource: 'contacts', file: 'ids.txt' };
const terminal = (stdin: string) => fakeCtx({ stdin, stdinTTY: true, stderrTTY: true, stdoutTTY: true });

describe('batch --delete: the confirmation', () => {
  it('a rerun that deleted 57 of 250 asks about the 193 left, and 193 confirms', async () => {
    const ctx = terminal('193\n');
    await confirmDelete(ctx, o, 250, undefined, undefined, 57);
    const said = ctx.stderrText().replace(/\s+/g, ' ');
    expect(said).toContain('This deletes 193 contacts (of 250: an earlier run deleted 57) listed in ids.txt.');
    expect(said).toContain('Type 193 or contacts to confirm');
    expect(said).not.toContain('Type 250');
  });

  it("on a rerun, typing the file's row count (250) does not confirm: nothing is deleted", async () => {
    const ctx = terminal('250\n');
    await expect(confirmDelete(ctx, o, 250, undefined, undefined, 57)).rejects.toThrow(
      /not confirmed .*nothing was deleted/,
    );
  });

  it('a first run asks about every row; a rerun with nothing left asks nothing', async () => {
    const first = terminal('250\n');
    await confirmDelete(first, o, 250, undefined);
    expect(first.stderrText()).toContain('Type 250 or contacts to confirm');
    const none = terminal('');
    await confirmDelete(none, o, 250, undefined, undefined, 250);
    expect(none.stderrText()).toBe('');
  });

  it('with --yes the notice names the rows left', async () => {
    const ctx = terminal('');
    await confirmDelete(ctx, { ...o, yes: true as const }, 250, 'ids.txt.deleted.ndjson', undefined, 57);
    expect(ctx.stderrText()).toContain('Deleting 193 contacts (of 250: an earlier run deleted 57).');
  });
});
