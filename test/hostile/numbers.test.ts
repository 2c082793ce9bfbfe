// Issue 9, class 7: numbers a double cannot hold (12345678901234567891, 1e400,
// 0.1000000000000000000001) come out of crm exactly as the server sent them, in every format and
// through every path that prints or saves a server body.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { json, meta, startHostile, type Hostile } from './server.js';

const BIG = '12345678901234567891';
const HUGE = '1e400';
const LONG = '0.1000000000000000000001';
const NUMBERS = [BIG, HUGE, LONG];

/** A contact as JSON text (JSON.stringify could not write these numbers). */
const contactText = (n: number): string =>
  `{"id":"con_${n}","email":"c${n}@example.com","big":${BIG},"huge":${HUGE},"long":${LONG},"safe":42}`;
const metaText = (): string => JSON.stringify(meta());
const pageText = (records: string[], cursor: string | null): string =>
  `{"object":"list","data":[${records.join(',')}],"page_info":{"end_cursor":${JSON.stringify(cursor)},"has_next_page":${cursor !== null}},"meta":${metaText()}}`;
const transcriptText = `{"recording_id":"rec_1","segments":[{"start_ms":${BIG},"confidence":${LONG},"score":${HUGE},"text":"hi"}]}`;

let h: Hostile;
let dir: string;
beforeAll(async () => {
  h = await startHostile();
  dir = mkdtempSync(join(tmpdir(), 'crm-numbers-'));
  h.route('GET', '/contacts/con_1', (_req, res) =>
    json(res, 200, `{"object":"success","data":${contactText(1)},"meta":${metaText()}}`),
  );
  h.route('GET', '/contacts', (req, res) =>
    req.query.get('cursor') === 'p2'
      ? json(res, 200, pageText([contactText(3)], null))
      : json(res, 200, pageText([contactText(1), contactText(2)], 'p2')),
  );
  h.route('POST', '/people/query', (_req, res) =>
    json(res, 200, `{"success":true,"data":{"people":[${contactText(1)}]},"nextCursor":null}`),
  );
  const recording = () => ({ id: 'rec_1', has_transcript: true, transcript_url: `${h.origin}/t/rec_1` });
  h.route('GET', '/recordings/rec_1', (_req, res) =>
    json(res, 200, { object: 'success', data: recording(), meta: meta() }),
  );
  h.route('GET', '/recordings', (_req, res) =>
    json(res, 200, {
      object: 'list',
      data: [recording()],
      page_info: { end_cursor: null, has_next_page: false },
      meta: meta(),
    }),
  );
  h.route('GET', '/t/rec_1', (_req, res) => json(res, 200, transcriptText));
});
afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function crm(...args: string[]): Promise<string> {
  const r = await runCrm(args, { env: h.env({ CRM_V1_API_KEY: 'v1_hostile_key_0123456789abcdef' }) });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

describe.each([
  ['get', ['contacts', 'get', 'con_1'], 1],
  ['list --all', ['contacts', 'list', '--all'], 3],
  ['api', ['api', 'GET', '/contacts/con_1'], 1],
  ['api --paginate', ['api', 'GET', '/contacts', '--paginate'], 3],
  ['v1 people query', ['v1', 'people', 'query', '--email', 'c1@example.com'], 1],
])('%s', (_name, args, records) => {
  it('-o json', async () => {
    const out = await crm('-o', 'json', ...args);
    for (const n of NUMBERS) expect(out.split(`: ${n}`).length - 1, n).toBe(records);
  });

  it('-o ndjson', async () => {
    const out = await crm('-o', 'ndjson', ...args);
    // `crm api` without --paginate prints the whole envelope as JSON whatever -o says
    const sep = args[0] === 'api' && !args.includes('--paginate') ? ': ' : ':';
    for (const n of NUMBERS) expect(out.split(`${sep}${n}`).length - 1, n).toBe(records);
  });

  if (args[0] === 'api' && !args.includes('--paginate')) return; // csv/tsv/table are for records
  it.each([
    ['csv', ','],
    ['tsv', '\t'],
  ])('-o %s', async (format, sep) => {
    const out = await crm('-o', format, ...args, '--fields', 'id,big,huge,long,safe');
    const rows = out.trim().split('\n');
    expect(rows).toHaveLength(records + 1);
    for (const row of rows.slice(1)) expect(row.split(sep).slice(1)).toEqual([...NUMBERS, '42']);
  });

  it('-o table', async () => {
    const out = await crm('-o', 'table', ...args, '--fields', 'id,big,huge,long');
    for (const n of NUMBERS) expect(out.split(n).length - 1, n).toBe(records);
  });
});

describe('transcripts', () => {
  it('crm recordings transcript prints the server JSON with its numbers', async () => {
    const out = await crm('recordings', 'transcript', 'rec_1');
    expect(out.replace(/\s+/g, '')).toBe(transcriptText);
  });

  it('crm recordings transcript --out and crm recordings download write it intact', async () => {
    const file = join(dir, 'one.json');
    await crm('recordings', 'transcript', 'rec_1', '--out', file);
    expect(readFileSync(file, 'utf8').replace(/\s+/g, '')).toBe(transcriptText);
    await crm('recordings', 'download', '--dir', join(dir, 'all'));
    expect(readFileSync(join(dir, 'all', 'rec_1.json'), 'utf8').replace(/\s+/g, '')).toBe(transcriptText);
  });
});

describe('request bodies', () => {
  it('--set field:=12345678901234567891 is sent exactly', async () => {
    h.route('POST', '/contacts', (_req, res) =>
      json(res, 201, `{"object":"success","data":${contactText(9)},"meta":${metaText()}}`),
    );
    const out = await crm(
      '-o',
      'ndjson',
      'contacts',
      'create',
      '--set',
      'email=n@example.com',
      '--set',
      `big:=${BIG}`,
      '--set',
      `huge:=${HUGE}`,
    );
    expect(out).toContain(`"big":${BIG}`);
    const sent = h.log.filter((r) => r.method === 'POST' && r.path.endsWith('/contacts')).at(-1)!;
    expect(sent.body).toBe(`{"email":"n@example.com","big":${BIG},"huge":${HUGE}}`);
  });
});

// Issue 27: what a file holds goes out as written. An undo file holds the server's numbers exactly; applying it
// refused the row ("cannot be sent exactly") and restored no field of that record.
describe('crm batch sends a number a double cannot hold as the file writes it', () => {
  const batchBodies: string[] = [];
  const patchBodies: string[] = [];
  beforeAll(() => {
    h.route('POST', '/contacts/batch', (req, res) => {
      batchBodies.push(req.body);
      const n = (req.body.match(/"email"/g) ?? []).length;
      const items = Array.from({ length: n }, (_x, index) => ({
        index,
        status: 'created',
        data: { id: `con_b${batchBodies.length}_${index}` },
      }));
      json(res, 200, {
        object: 'batch',
        data: { items, summary: { total: n, succeeded: n, failed: 0 } },
        meta: meta(),
      });
    });
    h.route('PATCH', /\/contacts\/con_u\d$/, (req, res) => {
      patchBodies.push(req.body);
      json(res, 200, `{"object":"success","data":{"id":"${req.path.split('/').pop()}"},"meta":${metaText()}}`);
    });
  });

  it('a CSV number or JSON cell, and an NDJSON value: created with the digits written', async () => {
    const csv = join(dir, 'big.csv');
    writeFileSync(csv, `email,score:number,prefs:json\nb1@example.com,${BIG},"{""n"":${LONG}}"\n`);
    await crm('-o', 'json', 'batch', 'contacts', csv);
    expect(batchBodies.at(-1)).toBe(`[{"email":"b1@example.com","score":${BIG},"prefs":{"n":${LONG}}}]`);
    const nd = join(dir, 'big.ndjson');
    writeFileSync(nd, `{"email":"b2@example.com","score":${BIG},"huge":${HUGE}}\n`);
    await crm('-o', 'json', 'batch', 'contacts', nd);
    expect(batchBodies.at(-1)).toBe(`[{"email":"b2@example.com","score":${BIG},"huge":${HUGE}}]`);
  });

  it('a delete keeps the record with its numbers, and importing the backup sends them as they were', async () => {
    h.route('DELETE', '/contacts/con_1', (_req, res) =>
      json(res, 200, { object: 'success', data: { id: 'con_1', deleted: true }, meta: meta() }),
    );
    const backup = join(dir, 'kept.deleted.ndjson');
    await crm('contacts', 'delete', 'con_1', '--yes', '--backup', backup);
    expect(readFileSync(backup, 'utf8')).toBe(`${contactText(1)}\n`);
    await crm('-o', 'json', 'batch', 'contacts', backup);
    expect(batchBodies.at(-1)).toBe(
      `[{"email":"c1@example.com","big":${BIG},"huge":${HUGE},"long":${LONG},"safe":42}]`,
    );
  });

  it('an undo file put back with --update: each value as the file holds it', async () => {
    const undo = join(dir, 'list.csv.undo.csv');
    writeFileSync(undo, `id,score:json,tags:json\r\ncon_u1,${BIG},"[1,${LONG}]"\r\n`);
    const out = JSON.parse(await crm('-o', 'json', 'batch', 'contacts', undo, '--update')) as Record<string, unknown>;
    expect(out).toMatchObject({ rows: 1, failed: 0, invalid: 0 });
    expect(patchBodies).toEqual([`{"score":${BIG},"tags":[1,${LONG}]}`]);
  });
});
