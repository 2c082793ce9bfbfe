// Error bodies that are slightly off the spec still give their message, code and details.
import { describe, expect, it } from 'vitest';
import { looseErrorBody, normaliseDetails } from '../../../src/http/envelope-check.js';
import { checkResponse } from '../../../src/http/envelope-check.js';
import {
  AuthError,
  ForbiddenError,
  NotFoundError,
  RateLimitError,
  ServerError,
  ValidationError,
} from '../../../src/http/errors.js';

describe('looseErrorBody', () => {
  it.each([
    [
      'details an object',
      { object: 'error', error: { code: 'X', message: 'm', details: { field: 'email' } } },
      { code: 'X', message: 'm', details: [{ field: 'email' }] },
    ],
    [
      'details null',
      { object: 'error', error: { code: 'X', message: 'm', details: null } },
      { code: 'X', message: 'm', details: [] },
    ],
    [
      'details strings',
      { object: 'error', error: { code: 'X', message: 'm', details: ['a', 'b'] } },
      { code: 'X', message: 'm', details: [{ message: 'a' }, { message: 'b' }] },
    ],
    [
      'meta missing',
      { object: 'error', error: { code: 'X', message: 'm', details: [] } },
      { code: 'X', message: 'm', details: [] },
    ],
    ['no code', { error: { message: 'm' } }, { code: undefined, message: 'm', details: [] }],
    ['a code only', { error: { code: 'GONE' } }, { code: 'GONE', message: 'GONE', details: [] }],
    ['error a string', { error: 'Contact not found' }, { code: undefined, message: 'Contact not found', details: [] }],
    [
      'error a code beside a message',
      { error: 'not_found', message: 'no such contact' },
      { code: 'not_found', message: 'no such contact', details: [] },
    ],
    [
      'a top-level message (v1)',
      { success: false, message: 'bad key' },
      { code: undefined, message: 'bad key', details: [] },
    ],
    [
      'RFC 9457 problem',
      { type: 'about:blank', title: 'Forbidden', status: 403, detail: 'scope contacts:write missing' },
      { code: undefined, message: 'scope contacts:write missing', details: [] },
    ],
    [
      'an errors list',
      { errors: [{ code: 'E1', detail: 'email taken' }] },
      { code: 'E1', message: 'email taken', details: [{ code: 'E1', detail: 'email taken' }] },
    ],
  ])('%s', (_name, body, want) => {
    expect(looseErrorBody(body)).toEqual(want);
  });

  it.each([[null], [[1, 2]], ['text'], [{}], [{ data: 1 }], [{ error: {} }], [{ message: '  ' }]])(
    'no message, no error body: %j',
    (body) => {
      expect(looseErrorBody(body)).toBeUndefined();
    },
  );

  it('normaliseDetails keeps objects and wraps the rest', () => {
    expect(normaliseDetails([{ a: 1 }, 'x', 3, null])).toEqual([{ a: 1 }, { message: 'x' }, { value: 3 }]);
  });
});

describe('checkResponse maps an off error body by its status', () => {
  const off = JSON.stringify({ object: 'error', error: { message: 'told you', details: { field: 'x' } } });
  it.each([
    [401, AuthError, 3],
    [403, ForbiddenError, 4],
    [404, NotFoundError, 5],
    [422, ValidationError, 6],
    [429, RateLimitError, 7],
    [500, ServerError, 8],
  ] as const)('%i', (status, Cls, exit) => {
    const r = checkResponse(status, off, 'success', 'req_h');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toBeInstanceOf(Cls);
    expect(r.error).toMatchObject({
      exitCode: exit,
      message: 'told you',
      status,
      requestId: 'req_h',
      details: [{ field: 'x' }],
    });
  });

  it('a 404 that is HTML or JSON without a message stays exit 8, quoted', () => {
    for (const text of ['<html>404</html>', '{"data":1}']) {
      const r = checkResponse(404, text, 'success');
      expect(!r.ok && r.error).toBeInstanceOf(ServerError);
      expect(!r.ok && r.error.message).toMatch(/unexpected response/);
    }
  });

  it('a 2xx with an off error body is not mapped to a status', () => {
    const r = checkResponse(200, off, 'success');
    expect(!r.ok && r.error).toBeInstanceOf(ServerError);
  });
});
