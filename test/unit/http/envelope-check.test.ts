import { describe, expect, it } from 'vitest';
import { checkResponse, quoteBody } from '../../../src/http/envelope-check.js';
import { AuthError, RateLimitError, ServerError, ValidationError } from '../../../src/http/errors.js';
import { errorBody, list, meta, success } from './helpers.js';

const json = (v: unknown) => JSON.stringify(v);

describe('quoteBody', () => {
  it('keeps the first 200 characters and marks the cut', () => {
    const q = quoteBody('a'.repeat(300));
    expect(q).toBe(`${'a'.repeat(200)}…`);
  });
  it('puts the quote on one line; other control characters are left to the printer, which escapes them', () => {
    expect(quoteBody(' a\r\n\tb\u2028c \u001b[31md\u202ee\u009bf\n')).toBe('a b c \u001b[31md\u202ee\u009bf');
  });
  it('leaves short clean text as it is', () => {
    expect(quoteBody('<html>hi</html>')).toBe('<html>hi</html>');
  });
});

describe('checkResponse', () => {
  it.each([
    ['success', success({ id: 1 })],
    ['list', list([{ id: 'a' }], null, false)],
    [
      'batch',
      {
        object: 'batch',
        data: {
          items: [{ index: 0, status: 'created', data: { id: 'a' } }],
          summary: { total: 1, succeeded: 1, failed: 0 },
        },
        meta: meta(),
      },
    ],
    ['v2', success({})],
    ['v2', list([], null, false)],
    ['v1', { success: true, data: { people: [] }, nextCursor: 'abc' }],
  ] as const)('accepts a %s envelope', (expect_, body) => {
    const r = checkResponse(200, json(body), expect_);
    expect(r.ok).toBe(true);
  });

  it('gives the request id from meta, else the header', () => {
    const r1 = checkResponse(200, json(success({}, 'req_1')), 'success', 'req_h');
    expect(r1.ok && r1.requestId).toBe('req_1');
    const r2 = checkResponse(200, json({ success: true, data: {} }), 'v1', 'req_h');
    expect(r2.ok && r2.requestId).toBe('req_h');
  });

  it.each([
    ['success', list([], null, false)],
    ['list', success({})],
    ['list', { object: 'list', data: {}, page_info: { end_cursor: null, has_next_page: false }, meta: meta() }],
    ['batch', success({})],
    ['v2', { object: 'thing' }],
    ['v2', [1, 2]],
    ['v1', success({})],
    ['success', { object: 'success', data: {} }],
  ] as const)('refuses, as expecting %s, %j', (expect_, body) => {
    const r = checkResponse(200, json(body), expect_);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toBeInstanceOf(ServerError);
      expect(r.truncated).toBe(false);
    }
  });

  it('marks a 2xx with a cut body as truncated (retryable)', () => {
    const r = checkResponse(200, '{"object":"succ', 'success');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.truncated).toBe(true);
      expect(r.error.message).toContain('{"object":"succ');
    }
  });

  it('says so for an empty body', () => {
    const r = checkResponse(200, '', 'success');
    expect(!r.ok && r.error.message).toContain('empty body');
  });

  it('maps an error envelope by status', () => {
    const r = checkResponse(401, json(errorBody('UNAUTHENTICATED', 'bad key', 'req_9')), 'success');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toBeInstanceOf(AuthError);
      expect(r.error.requestId).toBe('req_9');
      expect(r.truncated).toBe(false);
    }
  });

  it('keeps a 429 with an HTML body a rate limit', () => {
    const r = checkResponse(429, '<html>slow down</html>', 'success');
    expect(!r.ok && r.error).toBeInstanceOf(RateLimitError);
  });

  it('a 5xx that is not an error envelope is a ServerError quoting it', () => {
    const r = checkResponse(500, '{"oops":true}', 'success');
    expect(!r.ok && r.error).toBeInstanceOf(ServerError);
    expect(!r.ok && r.error.message).toContain('{"oops":true}');
  });

  it('maps a v1 error without details', () => {
    const r = checkResponse(422, json({ success: false, error: { code: 'VALIDATION_FAILED', message: 'x' } }), 'v1');
    expect(!r.ok && r.error).toBeInstanceOf(ValidationError);
    expect(!r.ok && r.error.details).toEqual([]);
  });
});

describe('the next step after an API error (new-user trial: a 401, 403 or 404 alone did not say what to check)', () => {
  it.each([
    [401, 'UNAUTHORIZED', /crm keys-check.*crm keys add NAME.*CRM_API_KEY/],
    [403, 'FORBIDDEN', /lacks a scope.*crm keys-check/],
    [404, 'NOT_FOUND', /if the id is right, check the base URL: it ends in \/api\/v2/],
  ])('%i carries a hint', (status, code, hint) => {
    const checked = checkResponse(status, JSON.stringify(errorBody(code, 'nope')), 'v2');
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.error.hint).toMatch(hint);
  });

  it('a 422 keeps the details alone (the field names the fix)', () => {
    const checked = checkResponse(422, JSON.stringify(errorBody('VALIDATION_ERROR', 'bad')), 'v2');
    expect(!checked.ok && checked.error.hint).toBeUndefined();
  });
});
