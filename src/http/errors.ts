// One error class per exit code of the contract (CONTRACT §3). Commands and the HTTP core throw
// these; only src/cli/ turns them into messages and exit codes.

export interface ErrorInfo {
  status?: number;
  code?: string;
  requestId?: string;
  details?: Array<Record<string, unknown>>;
  /** a hint for the user on what to do next, printed after the message */
  hint?: string;
  cause?: unknown;
}

export abstract class CrmError extends Error {
  abstract readonly exitCode: number;
  readonly status?: number;
  readonly code?: string;
  readonly requestId?: string;
  readonly details: Array<Record<string, unknown>>;
  readonly hint?: string;
  /**
   * Set by the retry layer on a request's final error when no attempt of it can have been carried
   * out: each failed before reaching the API (no connection, the proxy refusing its tunnel) or was
   * answered 429. A write so failed was not sent; one attempt that may have reached it (a reset, a
   * timeout, a 5xx) leaves it in doubt, whatever the last attempt's error.
   */
  unsent?: boolean;

  constructor(message: string, info: ErrorInfo = {}) {
    super(message, info.cause === undefined ? undefined : { cause: info.cause });
    this.name = new.target.name;
    this.status = info.status;
    this.code = info.code;
    this.requestId = info.requestId;
    this.details = info.details ?? [];
    this.hint = info.hint;
  }
}

/** The same error (so the same exit code), with another message or hint. */
export function restated(err: CrmError, change: { message?: string; hint?: string }): CrmError {
  const Ctor = err.constructor as new (message: string, info: ErrorInfo) => CrmError;
  const info = { status: err.status, code: err.code, requestId: err.requestId, details: err.details, cause: err };
  const again = new Ctor(change.message ?? err.message, { ...info, hint: change.hint ?? err.hint });
  again.unsent = err.unsent;
  return again;
}

/** A CrmError class of one exit code. */
function withExitCode(code: number) {
  return class extends CrmError {
    readonly exitCode = code;
  };
}

/** 2: bad flag, bad JSON, unreadable or malformed file; nothing was sent. */
export class UsageError extends withExitCode(2) {}
/** 3: 401, or no key configured. */
export class AuthError extends withExitCode(3) {}
/** 4: 403, missing scope or another user's record. */
export class ForbiddenError extends withExitCode(4) {}
/** 5: 404, including a recording with no transcript. */
export class NotFoundError extends withExitCode(5) {}
/** 6: 422, validation failed or idempotency conflict. */
export class ValidationError extends withExitCode(6) {}
/** 7: 429 and the retries ran out. */
export class RateLimitError extends withExitCode(7) {}
/** 8: 5xx, connection reset, timeout or a body that is not the expected envelope, retries exhausted. */
export class ServerError extends withExitCode(8) {}
/**
 * 8 as well (issue 17): the local disk failed while crm wrote its own files (full, over quota, an I/O error):
 * an environment failure like the network's, not a bug (1) and not bad input (2, which says nothing was sent);
 * the work done is journaled, and rerunning once there is room resumes. Code `DISK_FULL`, `DISK_ERROR`.
 */
export class DiskError extends withExitCode(8) {}
/** 9: a batch or bulk command finished with some items failed or rejected. */
export class PartialFailureError extends withExitCode(9) {}
/** 130: interrupted (Ctrl-C); work already done is kept and a rerun resumes. */
export class InterruptedError extends withExitCode(130) {}

/** The error class for an HTTP status (4xx/5xx). Unknown 4xx are treated as validation (6). */
export function errorClassForStatus(status: number): new (message: string, info?: ErrorInfo) => CrmError {
  if (status === 401) return AuthError;
  if (status === 403) return ForbiddenError;
  if (status === 404 || status === 410) return NotFoundError;
  if (status === 429) return RateLimitError;
  if (status >= 500) return ServerError;
  return ValidationError;
}

export function isCrmError(err: unknown): err is CrmError {
  return err instanceof CrmError;
}
