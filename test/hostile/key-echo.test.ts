// Class 3 of issue 9: whatever a server sends back, the key never appears whole in crm's output.
// The hostile server echoes the key (v2 and v1) in headers, error envelopes, quoted bodies and
// records, raw and escaped (\u005f, \u0073, %5F), and every output of crm is searched for it,
// after undoing those escapes, so an escaped echo printed as such counts as a leak too.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm, type CrmResult } from '../helpers/run-crm.js';
import {
  contact,
  errorEnvelope,
  HOSTILE_KEY,
  json,
  listPage,
  meta,
  startHostile,
  success,
  type Hostile,
} from './server.js';

const V1_KEY = 'service_pk_v1S3cr3tZyXwVuTsRqPoNmLk5432';
/** what must never be shown: the key without its public prefix and without the last 4 the mask shows */
const SECRETS = [HOSTILE_KEY.slice('service_live_'.length, -4), V1_KEY.slice('service_pk_'.length, -4)];

/** `\uXXXX` for every character of `s` matching `which` (a server is free to escape any of them) */
function uEscape(s: string, which: RegExp): string {
  return s.replace(which, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
const ESCAPED = [
  uEscape(HOSTILE_KEY, /_/g), // service\u005flive\u005f…
  uEscape(HOSTILE_KEY, /[sA9]/g), // \u0073ervice_live_…
  uEscape(V1_KEY, /[_k]/g),
];

/** Undoes JSON, C-style and URL escapes, repeatedly, as a reader of the output could. */
function decoded(text: string): string {
  let prev = '';
  let cur = text;
  while (cur !== prev) {
    prev = cur;
    cur = cur
      .replace(/\\\\/g, '\\')
      .replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\x([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
  return cur;
}

function expectNoKey(r: CrmResult): void {
  const all = `${r.stdout}\n${r.stderr}`;
  for (const secret of SECRETS) {
    expect(all, 'the key, as printed').not.toContain(secret);
    expect(decoded(all), 'the key, after undoing escapes').not.toContain(secret);
  }
}

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
beforeEach(() => h.reset());
afterAll(async () => h?.close());

const env = (): Record<string, string | undefined> => h.env({ CRM_V1_API_KEY: V1_KEY });

/** A JSON text with `raw` pasted in verbatim where the placeholder string stands (to keep escapes as sent). */
function withRaw(body: unknown, placeholder: string, raw: string): string {
  return (typeof body === 'string' ? body : JSON.stringify(body)).split(placeholder).join(raw);
}

describe('an echoed key in headers', () => {
  it('X-Request-Id (and meta.request_id) holding the key: error line and -o json error object', async () => {
    h.route('GET', /\/contacts\/con_1$/, (_req, res) => {
      const body = withRaw(
        { ...(errorEnvelope('NOT_FOUND', 'no such contact') as object), meta: { ...meta(), request_id: 'RID' } },
        'RID',
        ESCAPED[0]!,
      );
      res.writeHead(404, { 'content-type': 'application/json', 'x-request-id': HOSTILE_KEY });
      res.end(body);
    });
    // not an envelope: the request id can only come from the header
    h.route('GET', /\/contacts\/con_2$/, (_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html', 'x-request-id': V1_KEY });
      res.end('<html>Not Found</html>');
    });
    for (const args of [
      ['contacts', 'get', 'con_1'],
      ['-o', 'json', 'contacts', 'get', 'con_1'],
      ['-o', 'json', 'contacts', 'get', 'con_2'],
    ]) {
      const r = await runCrm(args, { env: env() });
      expect(r.code, r.stderr).not.toBe(0);
      expect(r.stderr).toMatch(/request service_(live|pk)_…/);
      expect(r.stderr).toMatch(/Error: /);
      expectNoKey(r);
    }
  });

  it('Location of a redirect holding the key, raw or percent-encoded', async () => {
    const encoded = HOSTILE_KEY.replace(/_/g, '%5F').replace(/s/g, '%73');
    h.route('GET', '/contacts', (_req, res, ctx) => {
      res.writeHead(302, {
        location: `https://evil.example/cb?k=${ctx.count === 0 ? HOSTILE_KEY : encoded}&v1=${V1_KEY}`,
      });
      res.end();
    });
    for (let i = 0; i < 2; i++) {
      const r = await runCrm(['-o', 'json', '-v', 'contacts', 'list'], { env: env() });
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toContain('redirect');
      expectNoKey(r);
    }
  });
});

describe('an echoed key in an error body', () => {
  it('JSON-escaped in the message and the details (\\u005f, \\u0073), both keys', async () => {
    h.route('POST', '/contacts', (_req, res) => {
      const body = errorEnvelope('VALIDATION_FAILED', 'key MSG is not allowed here', [
        { field: 'email', message: 'seen DETAIL' },
        { field: 'MSG', message: 'x' },
      ]);
      res.writeHead(422, { 'content-type': 'application/json' });
      res.end(withRaw(withRaw(body, 'MSG', ESCAPED[0]!), 'DETAIL', `${ESCAPED[1]!} and ${ESCAPED[2]!}`));
    });
    for (const output of ['table', 'json']) {
      const r = await runCrm(['-o', output, 'contacts', 'create', '--set', 'email=a@b.c'], { env: env() });
      expect(r.code, r.stderr).toBe(6);
      expect(r.stderr).toContain('is not allowed here');
      expect(r.stderr).toContain('service_live_…9876');
      expectNoKey(r);
      if (output === 'json') {
        const obj = JSON.parse(r.stderr.trim().split('\n').at(-1)!) as {
          error: { message: string; details: unknown[] };
        };
        expect(obj.error.message).toBe('key service_live_…9876 is not allowed here');
        expect(obj.error.details).toHaveLength(2);
      }
    }
  });

  it('in a body that is not an envelope, quoted: escaped, and raw across the 200-character cut', async () => {
    h.route('GET', '/contacts', (_req, res, ctx) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end(
        ctx.count === 0
          ? `<html>bad gateway for ${ESCAPED[0]} ${ESCAPED[2]}</html>`
          : `<html>${'x'.repeat(170)} ${HOSTILE_KEY}</html>`,
      );
    });
    for (let i = 0; i < 2; i++) {
      const r = await runCrm(['-o', 'json', '--max-retries', '0', 'contacts', 'list'], { env: env() });
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toContain('unexpected response');
      expectNoKey(r);
    }
  });
});

describe('an echoed key in data', () => {
  beforeEach(() => {
    // page 1: the key (escaped) in a field, as a field name and as the cursor; page 2: the v1 key
    h.route('GET', '/contacts', (req, res) => {
      const first = !req.query.get('cursor');
      const rec = contact(first ? 1 : 2, { notes: 'NOTE', PLACE: 1 });
      const body = listPage([rec], first ? 'CURSOR' : null, first);
      const text = withRaw(
        withRaw(withRaw(body, 'NOTE', first ? `key ${ESCAPED[1]}` : ESCAPED[2]!), 'PLACE', ESCAPED[0]!),
        'CURSOR',
        ESCAPED[0]!,
      );
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_1' });
      res.end(text);
    });
    h.route('GET', /\/contacts\/con_1$/, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(withRaw(success(contact(1, { notes: 'NOTE' })), 'NOTE', `${ESCAPED[1]} / ${ESCAPED[2]}`));
    });
  });

  it.each(['table', 'json', 'ndjson', 'csv', 'tsv'])('list --all -v, -o %s', async (output) => {
    const fields = output === 'table' ? ['--fields', 'id,notes'] : []; // the default columns leave notes out
    const r = await runCrm(['-o', output, '-v', ...fields, 'contacts', 'list', '--all'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('con_000002');
    expectNoKey(r);
  });

  it('list (one page, the cursor hint), get, and crm api', async () => {
    for (const args of [
      ['-o', 'table', 'contacts', 'list'],
      ['-o', 'table', 'contacts', 'get', 'con_1'],
      ['-o', 'json', 'contacts', 'get', 'con_1'],
      ['api', 'GET', '/contacts'],
      ['api', 'GET', '/contacts', '--paginate'],
    ]) {
      const r = await runCrm(args, { env: env() });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expectNoKey(r);
    }
  });

  it('crm v1: the v1 key echoed in a header and a record', async () => {
    h.route('POST', '/people/query', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': V1_KEY });
      res.end(
        withRaw(
          { success: true, data: { people: [{ id: 'p1', email: 'EMAIL' }] }, nextCursor: null },
          'EMAIL',
          ESCAPED[2]!,
        ),
      );
    });
    for (const output of ['table', 'json']) {
      const r = await runCrm(['-o', output, '-v', 'v1', 'people', 'query'], { env: env() });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('p1');
      expectNoKey(r);
    }
  });
});

describe('an echoed key in a transcript', () => {
  it('recordings transcript: the transcript JSON and a failed download', async () => {
    h.route('GET', /\/recordings\/rec_[12]$/, (req, res) =>
      json(
        res,
        200,
        success({
          id: req.path.slice(-5),
          has_transcript: true,
          transcript_url: `${h.origin}/transcripts/${req.path.slice(-1)}`,
        }),
      ),
    );
    h.route('GET', '/transcripts/1', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(withRaw({ segments: [{ speaker: 'A', text: 'TEXT' }] }, 'TEXT', `${ESCAPED[1]} ${ESCAPED[2]}`));
    });
    h.route('GET', '/transcripts/2', (_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(withRaw(errorEnvelope('FORBIDDEN', 'MSG'), 'MSG', ESCAPED[0]!));
    });
    const ok = await runCrm(['recordings', 'transcript', 'rec_1'], { env: env() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('service_live_…9876');
    expectNoKey(ok);
    const failed = await runCrm(['-o', 'json', 'recordings', 'transcript', 'rec_2'], { env: env() });
    expect(failed.code, failed.stderr).toBe(4);
    expectNoKey(failed);
  });

  it('a transcript that is not JSON, the key across the 200-character cut of its quote', async () => {
    h.route('GET', /\/recordings\/rec_3$/, (_req, res) =>
      json(res, 200, success({ id: 'rec_3', has_transcript: true, transcript_url: `${h.origin}/transcripts/3` })),
    );
    h.route('GET', '/transcripts/3', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${'x'.repeat(144)} ${ESCAPED[0]!} <html>`); // the cut at 200 leaves all but the key's last 6 characters
    });
    const r = await runCrm(['-o', 'json', '--max-retries', '0', 'recordings', 'transcript', 'rec_3'], { env: env() });
    expect(r.code, r.stderr).toBe(8);
    expect(r.stderr).toMatch(/not valid JSON/);
    expect(decoded(r.stderr)).not.toContain(HOSTILE_KEY.slice(0, 40));
    expectNoKey(r);
  });
});
