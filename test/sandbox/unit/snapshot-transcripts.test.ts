// loadSnapshotTranscripts (`crm sandbox --from DIR`, a snapshot taken with --transcripts): a recording's
// transcript is DIR/transcripts/<the name the download engine gave its id>, never a file elsewhere,
// whatever the id; a recording without its file is counted for the start line.
import fc from 'fast-check';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSnapshotTranscripts, snapshotTranscript } from '../../../src/sandbox/snapshot-transcripts.js';
import { fileNames } from '../../../src/util/safe-name.js';
import { runs } from '../../helpers/property.js';

const root = mkdtempSync(join(tmpdir(), 'crm-snapshot-transcripts-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

describe('loadSnapshotTranscripts', () => {
  it('finds each recording’s file by its safe name inside DIR/transcripts, and only there, whatever the ids', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 30 }), { maxLength: 8 }),
        fc.array(fc.boolean()),
        (ids, kept) => {
          const dir = mkdtempSync(join(root, `${n++}-`));
          const folder = join(dir, 'transcripts');
          mkdirSync(folder);
          const names = fileNames(ids);
          const written = ids.filter((_, i) => kept[i] ?? true);
          ids.forEach((id, i) => {
            if (kept[i] ?? true) writeFileSync(join(folder, names[i]!), JSON.stringify({ id }));
          });
          // what a path-traversal id would name, were it joined as it is: never read
          writeFileSync(join(dir, 'manifest.json.json'), '{"not": "a transcript"}');
          const recordings = ids.map((id) => ({ id, has_transcript: true }));
          const { transcripts, warnings } = loadSnapshotTranscripts(dir, recordings);
          expect([...transcripts.keys()].sort()).toEqual([...written].sort());
          for (const [id, file] of transcripts) {
            expect(dirname(file)).toBe(folder);
            expect(JSON.parse(snapshotTranscript(transcripts, id)!.raw!)).toEqual({ id });
          }
          expect(warnings).toHaveLength(written.length < ids.length ? 1 : 0);
        },
      ),
      runs(60),
    );
  });

  it('a recording without has_transcript is not served from a file; no folder means none at all (said)', () => {
    const dir = mkdtempSync(join(root, `${n++}-`));
    expect(loadSnapshotTranscripts(dir, [{ id: 'rec_1', has_transcript: true }])).toEqual({
      transcripts: new Map(),
      warnings: [
        `snapshot ${dir} holds no transcripts (it was taken without --transcripts): the 1 recordings with one each get a generated transcript`,
      ],
    });
    expect(loadSnapshotTranscripts(dir, [{ id: 'rec_1', has_transcript: false }]).warnings).toEqual([]);
    mkdirSync(join(dir, 'transcripts'));
    writeFileSync(join(dir, 'transcripts', 'rec_1.json'), '{}');
    expect(loadSnapshotTranscripts(dir, [{ id: 'rec_1', has_transcript: false }]).transcripts.size).toBe(0);
    expect(snapshotTranscript(undefined, 'rec_1')).toBeUndefined();
  });

  it('a file that is not JSON is refused, named', () => {
    const dir = mkdtempSync(join(root, `${n++}-`));
    mkdirSync(join(dir, 'transcripts'));
    writeFileSync(join(dir, 'transcripts', 'rec_2.json'), '{"cut');
    expect(() => loadSnapshotTranscripts(dir, [])).toThrow(
      `snapshot ${join(dir, 'transcripts', 'rec_2.json')}: not valid JSON`,
    );
  });
});
