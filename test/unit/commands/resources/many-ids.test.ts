// `get`/`delete` with several ids, in-process with a fake client: list output in input order, one id
// unchanged, missing ids named (exit 9, or 5 when all are missing), the delete confirmation.
import { existsSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runDelete } from '../../../../src/commands/resources/delete.js';
import { runGet } from '../../../../src/commands/resources/get.js';
import { AuthError, NotFoundError, PartialFailureError, UsageError } from '../../../../src/http/errors.js';
import type { ApiResponse, HttpClient, RequestOptions } from '../../../../src/http/types.js';
import { fakeCtx, type FakeCtxOptions } from '../../../helpers/fake-ctx.js';

/** A client that knows `known` ids; answers after a delay that makes later ids finish first. */
function fakeClient(known: readonly string[], opts: { gone?: string; fail?: Error } = {}) {
  const sent: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const client = {
    baseUrl: 'http://x.invalid/api/v2',
    stats: { requests: 0, retries: 0 },
    async request(o: RequestOptions): Promise<ApiResponse> {
      sent.push(`${o.method} ${o.path}`);
      const id = decodeURIComponent(o.path.split('/').pop()!);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await new Promise((r) => setTimeout(r, (known.length - known.indexOf(id)) % 5));
      inFlight--;
      if (opts.fail) throw opts.fail;
      const base = { status: 200, headers: {}, retries: 0 };
      if (o.method === 'DELETE' && id === opts.gone) return { ...base, body: { data: null }, goneOnRetry: true };
      if (!known.includes(id)) throw new NotFoundError('Contact not found', { status: 404, code: 'NOT_FOUND' });
      return {
        ...base,
        body: { data: o.method === 'DELETE' ? { id, deleted: true } : { id, email: `${id}@example.com` } },
      };
    },
  } as unknown as HttpClient;
  return { client, sent, maxInFlight: () => maxInFlight };
}

const IDS = Array.from({ length: 30 }, (_, i) => `con_${i}`);
const ctxWith = (client: HttpClient, output: 'json' | 'ndjson' | 'csv' | 'table', o: FakeCtxOptions = {}) =>
  fakeCtx({ client: async () => client, globals: { output }, ...o });
const get = (ids: string[], ctx: ReturnType<typeof fakeCtx>, concurrency = 4) =>
  runGet({ resource: 'contacts', ids, concurrency }, ctx);

describe('get with several ids', () => {
  it('ids from standard input: NDJSON in input order, concurrency respected', async () => {
    const f = fakeClient(IDS);
    const ctx = ctxWith(f.client, 'ndjson', {
      stdin: `${IDS.slice(0, 10).join('\n')}\n\n  \r\n${IDS.slice(10).join('\r\n')}\n`,
    });
    await get(['-'], ctx, 3);
    expect(
      ctx
        .stdoutText()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual(IDS);
    expect(f.sent).toHaveLength(30);
    expect(f.maxInFlight()).toBe(3);
  });

  it('-o json is an array, csv a list with one header, arguments and - mixed', async () => {
    const json = ctxWith(fakeClient(IDS).client, 'json', { stdin: 'con_2\ncon_3\n' });
    await get(['con_1', '-', 'con_4'], json);
    expect(JSON.parse(json.stdoutText()).map((r: { id: string }) => r.id)).toEqual([
      'con_1',
      'con_2',
      'con_3',
      'con_4',
    ]);
    const csv = ctxWith(fakeClient(IDS).client, 'csv', { globals: { output: 'csv', fields: ['id'] } });
    await get(['con_1', 'con_2'], csv);
    expect(csv.stdoutText()).toBe('id\ncon_1\ncon_2\n');
  });

  it('one id keeps the single record; `-` with one line is still a list', async () => {
    const one = ctxWith(fakeClient(IDS).client, 'json');
    await get(['con_1'], one);
    expect(JSON.parse(one.stdoutText())).toEqual({ id: 'con_1', email: 'con_1@example.com' });
    const piped = ctxWith(fakeClient(IDS).client, 'json', { stdin: 'con_1\n' });
    await get(['-'], piped);
    expect(JSON.parse(piped.stdoutText())).toEqual([{ id: 'con_1', email: 'con_1@example.com' }]);
  });

  it('a missing id is named on stderr (sanitised), the others printed, exit 9', async () => {
    const ctx = ctxWith(fakeClient(IDS).client, 'ndjson');
    const err = await get(['con_1', 'con_\u001b[31mx', 'con_2'], ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PartialFailureError);
    expect((err as PartialFailureError).exitCode).toBe(9);
    expect((err as Error).message).toBe('1 of 3 contacts not fetched (each is named above); the other 2 were fetched');
    expect(
      ctx
        .stdoutText()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual(['con_1', 'con_2']);
    expect(ctx.stderrText()).toBe('contact con_\\x1b[31mx: Contact not found (HTTP 404)\n');
  });

  it('every id missing: that error (exit 5); an error of the key ends the run with its own code', async () => {
    const ctx = ctxWith(fakeClient(IDS).client, 'json');
    const err = await get(['con_a', 'con_b'], ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect(JSON.parse(ctx.stdoutText())).toEqual([]);
    const auth = fakeClient(IDS, { fail: new AuthError('bad key', { status: 401 }) });
    const ctx2 = ctxWith(auth.client, 'json');
    await expect(get(IDS, ctx2, 2)).rejects.toBeInstanceOf(AuthError);
    expect(auth.sent.length).toBeLessThanOrEqual(2);
    expect(JSON.parse(ctx2.stdoutText())).toEqual([]); // the array is closed
  });

  it('repeated ids, from arguments and stdin: each fetched once, named once at the end', async () => {
    const f = fakeClient(IDS);
    const ctx = ctxWith(f.client, 'ndjson', { stdin: 'con_1\ncon_2\ncon_1\ncon_1\n' });
    await get(['con_1', '-', 'con_2'], ctx);
    expect(f.sent).toEqual(['GET /contacts/con_1', 'GET /contacts/con_2']);
    expect(ctx.stderrText()).toBe('Given more than once, fetched once: contacts con_1, con_2.\n');
  });

  it('a malformed id or `-` twice is a usage error before anything is sent', async () => {
    const f = fakeClient(IDS);
    await expect(get(['con_1', '..'], ctxWith(f.client, 'json'))).rejects.toBeInstanceOf(UsageError);
    await expect(get(['-', '-'], ctxWith(f.client, 'json'))).rejects.toBeInstanceOf(UsageError);
    expect(f.sent).toEqual([]);
  });
});

describe('delete with several ids', () => {
  it('--yes: each deleted, a retry that found it gone counts as deleted; table mode says so per id', async () => {
    const f = fakeClient(IDS, { gone: 'con_2' });
    const ctx = ctxWith(f.client, 'table');
    await runDelete(
      { resource: 'contacts', ids: ['con_1', 'con_2', 'con_3'], concurrency: 4, yes: true, backup: false },
      ctx,
    );
    expect(ctx.stdoutText()).toBe('Deleted contact con_1.\nDeleted contact con_2.\nDeleted contact con_3.\n');
    expect(ctx.stderrText()).toMatch(/contact con_2: the first attempt's answer was lost/);
    expect(f.sent.every((s) => s.startsWith('DELETE '))).toBe(true);
  });

  it('without --yes and without a terminal: refused, nothing sent', async () => {
    const f = fakeClient(IDS);
    const ctx = ctxWith(f.client, 'json', { stdin: 'con_1\ncon_2\n' });
    await expect(runDelete({ resource: 'contacts', ids: ['-'], concurrency: 4 }, ctx)).rejects.toThrow(
      'refusing to delete the contacts read from standard input without confirmation: pass --yes',
    );
    expect(f.sent).toEqual([]);
  });

  it('on a terminal: asked once, with the count and the ids', async () => {
    const f = fakeClient(IDS);
    const stdin = new PassThrough();
    const ctx = ctxWith(f.client, 'json', { stdin, stdinTTY: true, stdoutTTY: true });
    const done = runDelete(
      { resource: 'contacts', ids: ['con_1', 'con_2', 'con_3'], concurrency: 4, backup: 'kept.ndjson' },
      ctx,
    );
    // answered once the question shows (not after a fixed 10 ms)
    for (let i = 0; i < 500 && !ctx.stderrText().includes('[y/N]'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(ctx.stderrText()).toContain('Each record is first kept, as it is now, in kept.ndjson.');
    expect(ctx.stderrText()).toContain('Delete 3 contacts (con_1, con_2, con_3)? [y/N] ');
    // the backup is opened once confirmed: here, refused
    stdin.write('n\n');
    await expect(done).rejects.toThrow('not confirmed');
    expect(f.sent).toHaveLength(0);
    expect(existsSync('kept.ndjson')).toBe(false);
  });
});
