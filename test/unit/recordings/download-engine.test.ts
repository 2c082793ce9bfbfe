// The download engine with a fake API client and a tiny transcript server: hostile ids stay inside
// DIR, bad bodies never become files, option parsing.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { FakeClock } from '../../helpers/clock.js';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import {
  accounted,
  downloadAll,
  selectRecording,
  type DownloadEngineDeps,
} from '../../../src/commands/recordings/download-engine.js';
import { fileNames } from '../../../src/util/safe-name.js';
import { parseConcurrency, parseSince, progressText } from '../../../src/commands/recordings/download.js';
import { NotFoundError, UsageError } from '../../../src/http/errors.js';
import { Pacer } from '../../../src/http/pacer.js';
import type { ApiResponse, RequestOptions } from '../../../src/http/types.js';
import { withLinks } from '../../helpers/link-client.js';
import { tempDir } from '../../helpers/temp.js';

let server: http.Server;
let origin: string;
/** how the server answers a transcript, by recording id */
let mode: (id: string) => 'ok' | 'truncated' | 'other' = () => 'ok';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const id = decodeURIComponent((req.url ?? '').replace(/^\/t\//, ''));
    const body = JSON.stringify({
      recording_id: mode(id) === 'other' ? 'rec_someone_else' : id,
      segments: [{ text: `hello ${id}` }],
    });
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '99',
      'x-ratelimit-reset': '1',
    });
    res.end(mode(id) === 'truncated' ? body.slice(0, 10) : body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/** `records` answer `GET /recordings/{id}`; `listed` (default the same) is what the listing shows. */
function fakeClient(records: ApiRecord[], listed: ApiRecord[] = records): Parameters<typeof withLinks>[0] {
  return {
    baseUrl: 'http://127.0.0.1:1/api/v2',
    stats: { requests: 0, retries: 0 },
    async request<T>(opts: RequestOptions): Promise<ApiResponse<T>> {
      const m = /^\/recordings\/(.+)$/.exec(opts.path);
      const id = m ? decodeURIComponent(m[1]!) : undefined;
      const rec = records.find((r) => r.id === id);
      if (!rec) throw new NotFoundError(`no recording ${id}`, { status: 404 });
      const data = {
        ...rec,
        transcript_url: rec.has_transcript ? `${origin}/t/${encodeURIComponent(String(rec.id))}` : null,
      };
      return { status: 200, headers: {}, body: { data } as T, retries: 0 };
    },
    async *paginate() {
      for (const r of listed) yield { ...r, transcript_url: null };
    },
    async *pages() {},
  };
}

function deps(records: ApiRecord[], extra: Partial<DownloadEngineDeps> = {}, listed?: ApiRecord[]): DownloadEngineDeps {
  const clock = new FakeClock();
  return {
    client: withLinks(fakeClient(records, listed), clock, { maxRetries: 2 }),
    clock,
    signal: new AbortController().signal,
    pacer: new Pacer(clock),
    ...extra,
  };
}

function tmp(): string {
  return tempDir('crm-rec-unit-');
}

const HOSTILE_IDS = [
  '../../etc/passwd',
  '..\\x',
  'a/b',
  'CON',
  'nul.json',
  '\u0000',
  '\x1b[31m',
  'x'.repeat(500),
  '.',
  '..',
  '.hidden',
  'é',
  'É',
  'rec_ok',
];

describe('downloadAll', () => {
  it('keeps every hostile id inside DIR', async () => {
    const parent = tmp();
    const dir = path.join(parent, 'out');
    const records = HOSTILE_IDS.map((id) => ({ id, has_transcript: true, started_at: '2026-01-01T00:00:00Z' }));
    mode = () => 'ok';
    const report = await downloadAll({ dir, concurrency: 3, overwrite: false }, deps(records));

    // '.' and '..' cannot be asked for by id (they are not a path segment): reported, not written
    const usable = HOSTILE_IDS.filter((id) => id !== '.' && id !== '..');
    expect(report.summary.downloaded).toBe(usable.length);
    expect(report.summary.failures.map((f) => f.id).sort()).toEqual(['.', '..']);
    expect(fs.readdirSync(parent)).toEqual(['out']);
    const files = fs.readdirSync(dir).sort();
    const expected = fileNames(HOSTILE_IDS).filter((_, i) => usable.includes(HOSTILE_IDS[i]!));
    expect(files).toEqual([...expected].sort());
    for (const id of usable) {
      const file = path.join(dir, fileNames(HOSTILE_IDS)[HOSTILE_IDS.indexOf(id)]!);
      expect(JSON.parse(fs.readFileSync(file, 'utf8')).recording_id).toBe(id);
    }
  });

  it('never leaves a file for a truncated body or for another recording’s transcript', async () => {
    const dir = tmp();
    const records = [
      { id: 'rec_cut', has_transcript: true },
      { id: 'rec_other', has_transcript: true },
      { id: 'rec_good', has_transcript: true },
    ];
    mode = (id) => (id === 'rec_cut' ? 'truncated' : id === 'rec_other' ? 'other' : 'ok');
    const report = await downloadAll({ dir, concurrency: 2, overwrite: false }, deps(records));
    expect(report.summary).toMatchObject({ downloaded: 1, failed: 2 });
    expect(Object.fromEntries(report.summary.failures.map((f) => [f.id, f.error]))).toEqual({
      rec_cut: expect.stringMatching(/not valid JSON/),
      rec_other: expect.stringMatching(/another recording/),
    });
    expect(fs.readdirSync(dir)).toEqual(['rec_good.json']);
    mode = () => 'ok';
  });

  it('counts recordings without a transcript, and those that lost it since the listing', async () => {
    const dir = tmp();
    const records: ApiRecord[] = [
      { id: 'rec_a', has_transcript: true },
      { id: 'rec_b', has_transcript: false, transcript_status: 'processing' },
      { id: 'rec_c', has_transcript: false, transcript_status: 'no_audio' },
      { id: 'rec_d', has_transcript: false, transcript_status: 'processing' },
    ];
    // rec_d is listed with a transcript but the fresh get says it has none
    const listed = [...records.slice(0, 3), { id: 'rec_d', has_transcript: true }];
    const report = await downloadAll({ dir, concurrency: 4, overwrite: false }, deps(records, {}, listed));
    expect(report.summary).toMatchObject({ downloaded: 1, without_transcript: 3, failed: 0 });
  });

  it('accounts for every recording listed: downloaded + skipped + without + failed + not started + before --since = listed (property)', async () => {
    const rec = fc.record({
      id: fc.option(fc.constantFrom('rec_1', 'rec_2', 'rec_3', 'rec_4', 'rec_5', 'rec_6'), { nil: undefined }),
      has_transcript: fc.boolean(),
      started_at: fc.constantFrom('2025-01-01T00:00:00Z', '2026-06-01T00:00:00Z'),
    });
    const outcome = fc.constantFrom('ok', 'truncated', 'other', 'gone', 'refused', 'there');
    await fc.assert(
      fc.asyncProperty(
        fc.array(rec, { maxLength: 12 }),
        fc.dictionary(fc.constantFrom('rec_1', 'rec_2', 'rec_3', 'rec_4', 'rec_5', 'rec_6'), outcome),
        fc.boolean(),
        async (listed, how, since) => {
          const dir = tmp();
          const of = (id: string) => how[id] ?? 'ok';
          mode = (id) => {
            const m = of(id);
            return m === 'truncated' || m === 'other' ? m : 'ok';
          };
          for (const id of Object.keys(how))
            if (of(id) === 'there') fs.writeFileSync(path.join(dir, `${id}.json`), '{}');
          const records = listed.filter((r) => r.id !== undefined && of(r.id) !== 'gone') as ApiRecord[];
          const d = deps(records, {}, listed);
          // a refused link: its host never reached (ECONNREFUSED), which stops the rest
          const client = d.client;
          const refused: typeof client = {
            ...client,
            async request<T>(opts: RequestOptions): Promise<ApiResponse<T>> {
              const r = await client.request<{ data: ApiRecord }>(opts);
              const data = r.body.data;
              if (typeof data.id === 'string' && of(data.id) === 'refused' && data.transcript_url)
                data.transcript_url = 'http://127.0.0.1:1/t/x';
              return r as unknown as ApiResponse<T>;
            },
          };
          const report = await downloadAll(
            { dir, concurrency: 3, overwrite: false, ...(since ? { since: Date.parse('2026-01-01T00:00:00Z') } : {}) },
            { ...d, client: refused },
          );
          // a recording listed twice (with a transcript) is one recording
          const wanted = listed.filter(
            (r) => r.id !== undefined && r.has_transcript && !(since && r.started_at < '2026'),
          );
          const twice = wanted.length - new Set(wanted.map((r) => r.id)).size;
          expect(report.summary.listed).toBe(listed.length - twice);
          expect(accounted(report)).toBe(report.summary.listed);
        },
      ),
      runs(60),
    );
    mode = () => 'ok';
  });

  it('stops before starting anything once aborted, and says so', async () => {
    const dir = tmp();
    const ac = new AbortController();
    ac.abort();
    const report = await downloadAll(
      { dir, concurrency: 2, overwrite: false },
      deps([{ id: 'rec_a', has_transcript: true }], { signal: ac.signal }),
    );
    expect(report.interrupted).toBe(true);
    expect(report.summary.downloaded).toBe(0);
  });
});

describe('selectRecording', () => {
  const since = Date.parse('2026-03-01T00:00:00Z');
  it('applies --since to started_at, then has_transcript', () => {
    expect(selectRecording({ id: 'a', has_transcript: true, started_at: '2026-03-01T00:00:00Z' }, since)).toEqual({
      id: 'a',
    });
    expect(selectRecording({ id: 'a', has_transcript: true, started_at: '2026-02-28T23:59:59Z' }, since)).toBe(
      'filtered',
    );
    expect(selectRecording({ id: 'a', has_transcript: true }, since)).toBe('filtered');
    expect(selectRecording({ id: 'a', has_transcript: false, started_at: '2026-04-01T00:00:00Z' }, since)).toBe(
      'without',
    );
    expect(selectRecording({ id: 'a', has_transcript: 'true' })).toBe('without');
    expect(selectRecording({ has_transcript: true })).toBe('no-id');
  });
});

describe('parseSince', () => {
  it.each([
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T09:30', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30:15Z', '2026-03-01T09:30:15.000Z'],
    ['2026-03-01T09:30:15.250+01:00', '2026-03-01T08:30:15.250Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
  ])('reads %s', (text, iso) => {
    expect(new Date(parseSince(text)).toISOString()).toBe(iso);
  });

  it.each([
    'yesterday',
    '',
    '2026-13-01',
    '2025-02-29',
    '2026-02-30',
    '2026-3-1',
    '01/03/2026',
    '2026-03-01T25:00',
    '1700000000',
  ])('refuses %j', (text) => {
    expect(() => parseSince(text)).toThrow(UsageError);
  });
});

describe('parseConcurrency', () => {
  it('defaults to 4 and accepts 1–32', () => {
    expect(parseConcurrency(undefined)).toBe(4);
    expect(parseConcurrency(1)).toBe(1);
    expect(parseConcurrency('32')).toBe(32);
  });
  it.each([0, 33, -1, 1.5, '', 'four', '4x', Number.NaN])('refuses %j', (v) => {
    expect(() => parseConcurrency(v)).toThrow(UsageError);
  });
});

describe('progressText', () => {
  it('says where the run is', () => {
    expect(
      progressText({ phase: 'listing', listed: 200, total: 0, done: 0, downloaded: 0, skipped: 0, failed: 0 }),
    ).toBe('Listing recordings… 200');
    expect(
      progressText({ phase: 'downloading', listed: 20, total: 14, done: 5, downloaded: 3, skipped: 2, failed: 0 }),
    ).toBe('Downloading transcripts 5/14 (3 new, 2 already there, 0 failed)');
  });
});
