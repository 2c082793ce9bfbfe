// What a resumed reconcile takes from the job an interrupted run began (src/import/match/match.ts `earlierRun`, issue
// 27): the lines of records that run changed or created (checked again, not trusted), and the creates it left without an
// answer, to send again under the key they went out with — also when a run resuming the job was stopped again before
// it sent one of them (its journal then says nothing of that chunk).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Spool } from '../../../src/import/check/spool.js';
import { pinnedPlan } from '../../../src/import/journal/stage.js';
import { earlierRun, type Pinned } from '../../../src/import/match/match.js';
import type { FinishedChunk } from '../../../src/import/shapes.js';
import { tempDir } from '../../helpers/temp.js';

const chunk = (seq: number, lines: number[]) => ({
  seq,
  lines,
  rows: lines.map((line) => ({ line, record: { email: `r${line}@x` }, raw: [`r${line}@x`] })),
  body: JSON.stringify(lines.map((line) => ({ email: `r${line}@x` }))),
});

async function planOf(dir: string): Promise<string> {
  const plan = await Spool.create(dir, join(dir, 'job.jsonl.plan'));
  await plan.chunk(chunk(1, [2, 3]), 10); // answered in the run before: created both
  await plan.chunk(chunk(2, [4, 5]), 20); // sent without an answer in the run before
  await plan.chunk(chunk(3, [6, 7]), 30, { runId: 'first-run', absent: [7] }); // carried: left in doubt by the run before that one
  await plan.chunk(chunk(4, [8, 9]), 40); // never sent
  await plan.settled({ line: 10, raw: ['r10@x'], action: 'done', ids: ['c10'] }, 50); // done two runs ago
  await plan.update({ ...chunk(5, [11]), body: '[{"id":"c11","title":"New"}]' }, { title: 'Old' }, 60); // in doubt: replanned
  await plan.end(60);
  return plan.path;
}

function journal(o: { done: Record<number, FinishedChunk>; inDoubt: number[] }): Pinned['journal'] {
  return {
    runId: 'second-run',
    inDoubt: () => o.inDoubt,
    get: async (seq) => o.done[seq],
    close: async () => undefined,
  };
}

describe("a resumed reconcile's view of the interrupted run", () => {
  it('touched: rows it created or changed, and rows done before it; in doubt: its unanswered creates and carried ones', async () => {
    const dir = tempDir('crm-earlier-run-');
    const path = await planOf(dir);
    const done = { 1: { seq: 1, key: 'k1', lines: [2, 3], ids: ['c2', null], rejects: [] } };
    const got = await earlierRun({ path, at: '2026-11-29T00:00:00.000Z', journal: journal({ done, inDoubt: [2, 5] }) });
    // line 3 was rejected (no id): not touched, planned again
    expect([...got.touched].sort((a, b) => a - b)).toEqual([2, 10]);
    expect([...got.inDoubt.keys()]).toEqual([4, 6]);
    expect(got.inDoubt.get(4)!.runId).toBe('second-run');
    // the run before the interrupted one sent it: still its key, though the last run's journal says nothing of it
    expect(got.inDoubt.get(6)!.runId).toBe('first-run');
    expect(got.inDoubt.get(6)!.absent).toEqual([7]); // read back as written
    expect([...got.lines].sort((a, b) => a - b)).toEqual([4, 5, 6, 7]);
  });

  it('a carried create the last run answered is touched, no longer in doubt', async () => {
    const dir = tempDir('crm-earlier-run-');
    const path = await planOf(dir);
    const done = { 3: { seq: 3, key: 'k3', lines: [6, 7], ids: ['c6', 'c7'], rejects: [] } };
    const got = await earlierRun({ path, at: '2026-11-29T00:00:00.000Z', journal: journal({ done, inDoubt: [] }) });
    expect([...got.touched].sort((a, b) => a - b)).toEqual([6, 7, 10]);
    expect([...got.inDoubt.keys()]).toEqual([]);
  });
});

describe("the interrupted run's plan, found", () => {
  const sha = (text: string) => createHash('sha256').update(text).digest('hex');
  const header = (plan: string) =>
    `${JSON.stringify({ type: 'header', version: 1, resource: 'contacts', base_url: 'http://x', content_sha256: 'ab', plan, input: '/f.csv', created_at: new Date().toISOString() })}\n`;

  it('killed after its journal named the new plan, before the plan was moved into place: the new plan is used', async () => {
    const dir = tempDir('crm-pinned-');
    const journalPath = join(dir, 'job.jsonl');
    writeFileSync(`${journalPath}.plan`, 'the old plan\n');
    writeFileSync(`${journalPath}.plan.next`, 'the new plan\n');
    writeFileSync(journalPath, header(sha('the new plan\n')));
    const found = await pinnedPlan(journalPath, `${journalPath}.plan`, Date.now());
    expect(found?.path).toBe(`${journalPath}.plan`);
    expect(readFileSync(`${journalPath}.plan`, 'utf8')).toBe('the new plan\n');
    expect(existsSync(`${journalPath}.plan.next`)).toBe(false);
  });

  it('killed before its journal named the new plan: the old pair is used, the new plan left aside', async () => {
    const dir = tempDir('crm-pinned-');
    const journalPath = join(dir, 'job.jsonl');
    writeFileSync(`${journalPath}.plan`, 'the old plan\n');
    writeFileSync(`${journalPath}.plan.next`, 'the new plan\n');
    writeFileSync(journalPath, header(sha('the old plan\n')));
    const found = await pinnedPlan(journalPath, `${journalPath}.plan`, Date.now());
    expect(found?.path).toBe(`${journalPath}.plan`);
    expect(readFileSync(`${journalPath}.plan`, 'utf8')).toBe('the old plan\n');
  });
});
