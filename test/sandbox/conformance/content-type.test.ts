// Spec, Endpoints: "All version 2 requests and responses use application/json".
import { describe, expect, it } from 'vitest';
import { call, expectError, useSandbox } from '../helpers.js';

const ctx = useSandbox();

describe('request bodies are application/json', () => {
  it('a JSON body with Content-Type: application/json (with a charset) is accepted', async () => {
    const res = await call(ctx.sb, 'POST', '/companies', {
      body: { name: 'Typed' },
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded'])(
    'a body sent as %s is 422 INVALID_BODY',
    async (type) => {
      const res = await call(ctx.sb, 'POST', '/companies', {
        body: { name: 'Untyped' },
        headers: { 'content-type': type },
      });
      expectError(res, 422, 'INVALID_BODY');
      expect(res.body.error.message).toMatch(/application\/json/);
    },
  );

  it('every response is application/json', async () => {
    const res = await call(ctx.sb, 'GET', '/contacts');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
