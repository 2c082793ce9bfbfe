// The sandbox's own error: thrown by any handler, turned into the error envelope of the
// request's API version by the server.

export type ErrorDetail = Record<string, unknown>;

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const notFound = (what = 'Resource'): ApiError => new ApiError(404, 'NOT_FOUND', `${what} not found`);

export const invalidBody = (message: string): ApiError => new ApiError(422, 'INVALID_BODY', message);

export const invalidParameter = (name: string, message: string): ApiError =>
  new ApiError(422, 'INVALID_PARAMETER', message, [{ field: name, issue: 'invalid' }]);

export const forbiddenRecord = (id: string): ApiError => new ApiError(403, 'FORBIDDEN_RECORD', `Record ${id} belongs to another user`, [{ id }]);
