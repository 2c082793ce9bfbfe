import { describe, expect, it } from 'vitest';
import {
  AuthError,
  errorClassForStatus,
  ForbiddenError,
  InterruptedError,
  NotFoundError,
  PartialFailureError,
  RateLimitError,
  ServerError,
  UsageError,
  ValidationError,
} from '../../../src/http/errors.js';

describe('exit codes (CONTRACT §3)', () => {
  it.each([
    [UsageError, 2],
    [AuthError, 3],
    [ForbiddenError, 4],
    [NotFoundError, 5],
    [ValidationError, 6],
    [RateLimitError, 7],
    [ServerError, 8],
    [PartialFailureError, 9],
    [InterruptedError, 130],
  ] as const)('%o → %i', (Cls, code) => {
    const err = new Cls('x', { status: 418, code: 'C', requestId: 'req_1', details: [{ field: 'f' }] });
    expect(err.exitCode).toBe(code);
    expect(err).toMatchObject({ status: 418, code: 'C', requestId: 'req_1', details: [{ field: 'f' }] });
    expect(err.name).toBe(Cls.name);
  });

  it.each([
    [401, AuthError],
    [403, ForbiddenError],
    [404, NotFoundError],
    [410, NotFoundError],
    [422, ValidationError],
    [400, ValidationError],
    [409, ValidationError],
    [429, RateLimitError],
    [500, ServerError],
    [502, ServerError],
    [503, ServerError],
    [504, ServerError],
  ])('HTTP %i → %o', (status, Cls) => {
    expect(errorClassForStatus(status)).toBe(Cls);
  });
});
