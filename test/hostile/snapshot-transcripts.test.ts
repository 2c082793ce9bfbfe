// `crm snapshot DIR --transcripts` against a server that is not the sandbox: recording ids that are
// path-traversal names or absolute paths, and transcript links on another origin. Nothing may be
// written outside DIR/transcripts (each id gets its safe name inside it), the other origin never
// sees the API key, and an id that cannot even be asked for (`..`) is counted as failed, not lost.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safeFileName } from '../../src/util/safe-name.js';
import { runCrm } from '../helpers/run-crm.js';
import { tempDir } from '../helpers/temp.js';
import { HOSTILE_KEY, errorEnvelope, json, listPage, startHostile, success, type Hostile } from './server.js';

let h: Hostile;
let other: Hostile;
beforeAll(async () => {
  [h, other] = await Promise.all([startHostile(), startHostile()]);
});
afterAll(() => Promise.all([h?.close(), other?.close()]));

/** every file under `dir`, relative to it */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

// the last two: `..` cannot be asked for (GET /recordings/..), rec_gone was deleted since it was listed (404)
const IDS = ['rec_ok', '../../escape', '../transcripts/../../up', '/tmp/absolute', '..', 'rec_gone'];

describe('crm snapshot --transcripts against a hostile server', () => {
  it('ids that are paths stay inside DIR/transcripts, links on another origin get no key, an id that cannot be asked for is counted failed, a recording gone skipped', async () => {
    const listed = IDS.map((id) => ({ id, has_transcript: true, transcript_url: null }));
    h.route('GET', '/recordings', (_req, res) => json(res, 200, listPage(listed, null, false)));
    h.route('GET', /^\/api\/v2\/recordings\/[^/]+$/, (req, res) => {
      const id = decodeURIComponent(req.path.split('/').pop()!);
      if (id === 'rec_gone') return json(res, 404, errorEnvelope('NOT_FOUND', 'No such recording'));
      json(
        res,
        200,
        success({ id, has_transcript: true, transcript_url: `${other.origin}/t/${IDS.indexOf(id)}?sig=x` }),
      );
    });
    other.route('GET', /^\/t\/\d+$/, (req, res) => {
      const id = IDS[Number(req.path.split('/').pop())]!;
      json(res, 200, { recording_id: id, segments: [{ speaker: 'A', text: `said in ${id}` }] });
    });
    const root = tempDir('crm-hostile-snapshot-tr-');
    const dir = join(root, 'snap');
    const r = await runCrm(['snapshot', dir, '--resources', 'recordings', '--transcripts'], {
      env: h.env(),
      timeoutMs: 30_000,
    });
    // `..` cannot be a path segment of GET /recordings/{id}: that one failed, the rest are there
    expect(r.code, r.stderr).toBe(9);
    const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;
    expect(m.complete).toBe(false);
    expect(m.transcripts).toMatchObject({ files: 4, failed: 1, recordings_gone: 1, complete: false });
    expect(m.transcripts.failures.map((f: { id: string }) => f.id)).toEqual(['..']);

    // nothing outside DIR, and in DIR only the manifest, the collection and transcripts/<safe id>.json
    expect(readdirSync(root)).toEqual(['snap']);
    const names = IDS.slice(0, 4).map((id) => `${safeFileName(id)}.json`);
    expect(tree(dir)).toEqual(
      ['manifest.json', 'recordings.ndjson', ...names.map((n) => join('transcripts', n))].sort(),
    );
    for (const [i, name] of names.entries()) {
      expect(relative(join(dir, 'transcripts'), join(dir, 'transcripts', name))).toBe(name);
      expect(JSON.parse(readFileSync(join(dir, 'transcripts', name), 'utf8'))).toEqual({
        recording_id: IDS[i],
        segments: [{ speaker: 'A', text: `said in ${IDS[i]}` }],
      });
    }
    // the links' origin saw every download and never the key
    expect(other.log).toHaveLength(4);
    for (const req of other.log) {
      expect(JSON.stringify(req.headers)).not.toContain(HOSTILE_KEY);
      expect(req.headers['x-service-api-key'] ?? req.headers.authorization).toBeUndefined();
    }
  });
});
