import { describe, expect, it } from 'vitest';
import { NotFoundError, UsageError, ValidationError } from '../../../src/http/errors.js';
import { errorToJson, formatDetail, formatError } from '../../../src/output/errors.js';
import { RAW_UNSAFE } from '../../helpers/unsafe.js';

const linesOf = (err: unknown, opts?: { json?: boolean }): string[] =>
  formatError(err, opts).replace(/\n$/, '').split('\n');

describe('formatError', () => {
  const notFound = new NotFoundError('contact c_404 not found', {
    status: 404,
    code: 'NOT_FOUND',
    requestId: 'req_abc123',
  });

  it('prints the contract line for an HTTP error', () => {
    expect(formatError(notFound)).toBe('Error: contact c_404 not found (HTTP 404 NOT_FOUND, request req_abc123)\n');
  });

  it('prints details one per line and the hint', () => {
    const err = new ValidationError('validation failed', {
      status: 422,
      code: 'VALIDATION_FAILED',
      requestId: 'req_1',
      details: [
        { field: 'email', message: 'must be a valid email' },
        { path: ['address', 'city'], issue: 'required', code: 'missing' },
        { message: 'something general' },
        { weird: true },
      ],
      hint: 'fix the fields above and run again',
    });
    expect(formatError(err)).toMatchInlineSnapshot(`
      "Error: validation failed (HTTP 422 VALIDATION_FAILED, request req_1)
        - email: must be a valid email
        - address.city: required (missing)
        - something general
        - {"weird":true}
      Hint: fix the fields above and run again
      "
    `);
  });

  it('prints the first 10 details and how many more; the JSON object carries all of them', () => {
    const details = Array.from({ length: 25 }, (_, i) => ({ field: `f${i}`, message: 'bad' }));
    const err = new ValidationError('many', { status: 422, details, hint: 'fix them' });
    const lines = linesOf(err, { json: true });
    expect(lines.slice(1, 12)).toEqual([
      ...details.slice(0, 10).map((d) => `  - ${d.field}: bad`),
      '  … and 15 more (see -o json)',
    ]);
    expect(lines[12]).toBe('Hint: fix them');
    expect((JSON.parse(lines[13]!) as { error: { details: unknown[] } }).error.details).toEqual(details);
    expect(linesOf(new ValidationError('ten', { details: details.slice(0, 10) }))).toHaveLength(11);
  });

  it('adds one JSON object line with json', () => {
    const err = new ValidationError('bad', {
      status: 422,
      code: 'VALIDATION_FAILED',
      requestId: 'req_9',
      details: [{ field: 'email', message: 'taken' }],
    });
    const lines = linesOf(err, { json: true });
    expect(lines[0]).toBe('Error: bad (HTTP 422 VALIDATION_FAILED, request req_9)');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2]!)).toEqual({
      error: { code: 'VALIDATION_FAILED', message: 'bad', details: [{ field: 'email', message: 'taken' }] },
      status: 422,
      request_id: 'req_9',
      exit_code: 6,
    });
  });

  it('prints just the message for usage and unexpected errors', () => {
    expect(formatError(new UsageError('unknown flag --frobnicate'))).toBe('Error: unknown flag --frobnicate\n');
    expect(formatError(new Error('boom'))).toBe('Error: boom\n');
    expect(formatError('a string')).toBe('Error: a string\n');
    const [, json] = linesOf(new UsageError('bad --limit'), { json: true });
    expect(JSON.parse(json!)).toEqual({
      error: { code: 'USAGE_ERROR', message: 'bad --limit', details: [] },
      status: null,
      request_id: null,
      exit_code: 2,
    });
    expect(errorToJson(new Error('x'))).toMatchObject({ exit_code: 1, error: { code: 'UNEXPECTED_ERROR' } });
  });

  it('shows the parts it has: status without code, code without status', () => {
    expect(formatError(new NotFoundError('gone', { status: 410 }))).toBe('Error: gone (HTTP 410)\n');
    expect(formatError(new UsageError('timeout', { code: 'TIMEOUT' }))).toBe('Error: timeout (TIMEOUT)\n');
  });

  it('sanitises server text everywhere, in both modes', () => {
    const err = new ValidationError('bad \x1b[2J\x1b]8;;http://evil\x07name\u202e \u061c\u200e\u200f\u2028\u2029', {
      status: 422,
      code: 'X\x1b[31m',
      requestId: 'req_\r1',
      details: [{ field: 'na\x1bme', message: 'is\rbad\nreally' }],
      hint: 'hint \x9b',
    });
    const text = formatError(err, { json: true });
    expect(text.slice(0, -1).replace(/\n/g, '')).not.toMatch(RAW_UNSAFE);
    expect(text).toContain('\\x1b[2J');
    expect(text).toContain('  - na\\x1bme: is\\rbad\\nreally');
    const json = JSON.parse(text.trimEnd().split('\n').at(-1)!);
    expect(json.error.message).toBe(err.message);
    expect(json.error.details[0].message).toBe('is\rbad\nreally');
  });

  it('keeps the newlines of a multi-line message', () => {
    expect(formatError(new UsageError('line one\nline two\r\n\x1b[1Aline three'))).toBe(
      'Error: line one\nline two\n\\x1b[1Aline three\n',
    );
  });

  it('formatDetail falls back to JSON and never raw controls', () => {
    expect(formatDetail({ code: 'too_long' })).toBe('too_long');
    expect(formatDetail({ a: '\x1b' })).toBe('{"a":"\\u001b"}');
  });
});
