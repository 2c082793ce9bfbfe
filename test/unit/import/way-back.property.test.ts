// The way-back files over time (issue 27, CONTRACT §7c), as a property: any sequence of runs of one input — new runs,
// runs killed part-way (their files left as they are), resumed runs adding to the files of the run they resume, many
// in the same second — and the undo and created files, read back from disk, name every change exactly once, each
// job's in one file of its own, and no earlier job's file is ever lost, overwritten or renamed: a new job takes names
// no earlier job holds (wayBackNames), a resumed one its job's (src/import/files/way-back.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openMatchFiles, wayBackNames } from '../../../src/import/files/way-back.js';
import type { WayBackNames } from '../../../src/import/shapes.js';
import { runs } from '../../helpers/property.js';
import { tempDir } from '../../helpers/temp.js';

/** One run: new (a job of its own) or resuming the job before; its updates (record → value before) and creates. */
interface Run {
  resume: boolean;
  updates: Array<[number, number]>;
  creates: number;
  killed: boolean;
}

const runArb: fc.Arbitrary<Run> = fc.record({
  resume: fc.boolean(),
  updates: fc.array(fc.tuple(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 0, max: 99 })), { maxLength: 6 }),
  creates: fc.integer({ min: 0, max: 3 }),
  killed: fc.boolean(),
});

const rowsOf = (path: string): string[][] => {
  const all: string[][] = parse(readFileSync(path, 'utf8'), { bom: true });
  return all.slice(1);
};

let fresh = 0;
describe('the way-back files of any sequence of runs', () => {
  it('each job in one undo and one created file of its own, every change once, none lost', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(runArb, { minLength: 1, maxLength: 7 }), async (list) => {
        const dir = tempDir('crm-way-back-prop-');
        const base = join(dir, `list${fresh++}.csv`);
        /** what each job (a new run and the runs resuming it) changed first, and created */
        const jobs: Array<{ before: Map<string, string>; created: string[]; names: WayBackNames }> = [];
        let made = 0;
        for (const [r, run] of list.entries()) {
          // a run resumes a job only when there is one; one that sends nothing opens no way back
          const resume = run.resume && jobs.length > 0;
          if (!resume && run.updates.length === 0 && run.creates === 0) continue;
          // many in one second: the time a new job's names would carry
          if (!resume) jobs.push({ before: new Map(), created: [], names: await wayBackNames(base, 1_000 + r * 300) });
          const job = jobs.at(-1)!;
          const shape = { format: 'csv', header: ['email'] } as const;
          const files = await openMatchFiles(base, job.names, shape, ['email'], () => [`r${r}`], {
            changed: ['title'],
            creates: run.creates > 0,
            resume,
          });
          for (const [rec, value] of run.updates) {
            await files.undo.add(`con_${rec}`, { title: `v${value}` });
            if (!job.before.has(`con_${rec}`)) job.before.set(`con_${rec}`, JSON.stringify(`v${value}`));
          }
          const ids = Array.from({ length: run.creates }, () => `con_new${made++}`);
          await files.created({ lines: ids.map((_, i) => i + 2), records: () => ids.map(() => ({})) }, ids);
          // a resumed run replays a create of the run before it: listed once
          if (resume && job.created.length > 0)
            await files.created({ lines: [2], records: () => [{}] }, [job.created[0]!]);
          job.created.push(...ids);
          // killed: its files stay as they are on disk (every add was durable); otherwise committed
          if (run.killed) await files.discard();
          else await files.commit();
        }
        const names = readdirSync(dir);
        const undo = names
          .filter((n) => /\.undo(\.\d{8}T\d{6}Z(-\d+)?)?\.csv$/.test(n))
          .map((n) => rowsOf(join(dir, n)));
        const created = names
          .filter((n) => /\.created(\.\d{8}T\d{6}Z(-\d+)?)?\.csv$/.test(n))
          .map((n) => rowsOf(join(dir, n)));
        // every job that changed something has exactly one undo file, holding exactly its first values
        const wantUndo = jobs
          .filter((j) => j.before.size > 0)
          .map((j) => [...j.before].map(([id, v]) => `${id}=${v}`).sort());
        const gotUndo = undo.filter((f) => f.length > 0).map((f) => f.map((row) => `${row[0]}=${row[1]}`).sort());
        expect(gotUndo.map((f) => f.join(' ')).sort()).toEqual(wantUndo.map((f) => f.join(' ')).sort());
        // every created id in exactly one file, with the rest of its job
        const wantCreated = jobs.filter((j) => j.created.length > 0).map((j) => [...j.created].sort().join(' '));
        const gotCreated = created
          .filter((f) => f.length > 0)
          .map((f) =>
            f
              .map((row) => row[0])
              .sort()
              .join(' '),
          );
        expect(gotCreated.sort()).toEqual(wantCreated.sort());
        // each job's files are where its names say, for good: a command printed with them reaches that job's
        for (const j of jobs) {
          if (j.before.size > 0)
            expect(
              rowsOf(j.names.undo)
                .map((row) => `${row[0]}=${row[1]}`)
                .sort(),
            ).toEqual([...j.before].map(([id, v]) => `${id}=${v}`).sort());
          if (j.created.length > 0)
            expect(
              rowsOf(j.names.created)
                .map((row) => row[0])
                .sort(),
            ).toEqual([...j.created].sort());
        }
      }),
      runs(60),
    );
  });
});
