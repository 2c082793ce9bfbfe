import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { keysAdd } from '../../../../src/commands/keys/add.js';
import type { KeysAddOptions } from '../../../../src/commands/keys/command.js';
import { openConfigStore } from '../../../../src/config/store.js';
import { UsageError } from '../../../../src/http/errors.js';
import { fakeCtx, readableFrom, type FakeCtxOptions } from '../../../helpers/fake-ctx.js';

const V2 = 'service_live_Zx9QeR4tYu7IoP2aSd5f';
const V2B = 'service_live_Other0000000000000b7c1';
const V1 = 'service_pk_Lm3Nb6Vc8Xz1Qw4e';
const BASE = 'http://127.0.0.1:4010/api/v2';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-keys-add-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const ctxWith = (o: FakeCtxOptions = {}) => fakeCtx({ configDir: dir, ...o });
const stored = async () => {
  const s = await openConfigStore(dir);
  return { names: s.profileNames(), dflt: s.defaultProfile(), get: (n: string) => s.getProfile(n) };
};
const refusal = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(UsageError);
  return e as UsageError;
};

describe('keys add', () => {
  it('reads the key from piped stdin, trims one newline, stores it, confirms masked on stderr', async () => {
    const ctx = ctxWith({ stdin: `${V2}\n` });
    await keysAdd({ profile: 'dev', baseUrl: BASE }, ctx);
    const s = await stored();
    expect(s.get('dev')).toEqual({ base_url: BASE, api_key: V2, auth_header: 'x-api-key' });
    expect(s.dflt).toBe('dev'); // the first profile becomes the default
    expect(ctx.stdoutText()).toBe('');
    expect(ctx.stderrText()).toContain(`service_live_…${V2.slice(-4)}`);
    expect(ctx.stderrText()).toContain('the default profile');
    expect(ctx.stderrText()).not.toContain(V2);
    expect(fs.statSync(path.join(dir, 'config.json')).mode & 0o777).toBe(0o600);
  });

  it.each([
    ['CRLF', `${V2}\r\n`],
    ['no newline', V2],
    ['split across chunks', readableFrom('service_live_', 'Zx9QeR4tYu7', 'IoP2aSd5f\n')],
  ])('reads a piped key with %s', async (_n, stdin) => {
    await keysAdd({ profile: 'dev', baseUrl: BASE }, ctxWith({ stdin }));
    expect((await stored()).get('dev')?.api_key).toBe(V2);
  });

  it('trims only one newline: a second line makes it no key', async () => {
    const e = await refusal(keysAdd({ profile: 'dev', baseUrl: BASE }, ctxWith({ stdin: `${V2}\n\n` })));
    expect(e.message).toMatch(/not an API key/);
    expect(e.message).not.toContain(V2);
  });

  it('prints {"profile","base_url","key","default"} to stdout with -o json', async () => {
    const ctx = ctxWith({ stdin: V2, globals: { output: 'json' } });
    await keysAdd({ profile: 'dev', baseUrl: `${BASE}/` }, ctx);
    expect(JSON.parse(ctx.stdoutText())).toEqual({
      profile: 'dev',
      base_url: BASE,
      key: `service_live_…${V2.slice(-4)}`,
      key_kind: 'v2',
      default: true,
    });
    expect(ctx.stdoutText()).not.toContain(V2);
  });

  it('without -o json stdout stays clean even when it is not a TTY', async () => {
    const ctx = ctxWith({ stdin: V2 });
    await keysAdd({ profile: 'dev', baseUrl: BASE }, ctx);
    expect(ctx.stdoutText()).toBe('');
  });

  it('--quiet silences the confirmation', async () => {
    const ctx = ctxWith({ stdin: V2, globals: { quiet: true } });
    await keysAdd({ profile: 'dev', baseUrl: BASE }, ctx);
    expect(ctx.stderrText()).toBe('');
  });

  it('refuses a v1 key as a v2 key, saying which is which; nothing is stored', async () => {
    const e = await refusal(keysAdd({ profile: 'dev', baseUrl: BASE }, ctxWith({ stdin: V1 })));
    expect(e.message).toMatch(/version 1 key \(service_pk_…\).*version 2 key \(service_live_…\).*--v1/);
    expect(e.message).not.toContain(V1);
    expect((await stored()).names).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'config.json'))).toBe(false);
  });

  it('refuses a v2 key with --v1', async () => {
    const e = await refusal(keysAdd({ profile: 'dev', baseUrl: BASE, v1: true }, ctxWith({ stdin: V2 })));
    expect(e.message).toMatch(/version 2 key \(service_live_…\), but --v1 expects a version 1 key \(service_pk_…\)/);
  });

  it('refuses something that is no key at all', async () => {
    const e = await refusal(keysAdd({ profile: 'dev', baseUrl: BASE }, ctxWith({ stdin: 'hello world' })));
    expect(e.message).toMatch(/not an API key.*service_live_.*service_pk_/);
  });

  it('refuses empty stdin', async () => {
    const e = await refusal(keysAdd({ profile: 'dev', baseUrl: BASE }, ctxWith({ stdin: '\n' })));
    expect(e.message).toMatch(/No key on standard input/);
  });

  it('refuses to prompt when stdin is a TTY but stdout is not', async () => {
    const e = await refusal(keysAdd({ profile: 'dev', baseUrl: BASE }, ctxWith({ stdinTTY: true })));
    expect(e.message).toMatch(/Cannot prompt/);
    expect(e.hint).toMatch(/printf/);
  });

  it('asks on a terminal with a hidden prompt: the key is never echoed', async () => {
    const ctx = ctxWith({ stdinTTY: true, stdoutTTY: true, stderrTTY: true });
    const run = keysAdd({ profile: 'dev', baseUrl: BASE }, ctx);
    // the key typed once the prompt shows (not after a fixed 20 ms: the config is read first)
    for (let i = 0; i < 500 && !ctx.stderrText().includes('API key for'); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(ctx.stderrText()).toContain('API key for "dev" (service_live_…): ');
    (ctx.io.stdin as NodeJS.WritableStream & NodeJS.ReadableStream).write(`${V2}\r`);
    await run;
    expect((await stored()).get('dev')?.api_key).toBe(V2);
    expect(ctx.stderrText()).not.toContain(V2);
    expect(ctx.stdoutText()).not.toContain(V2);
  });

  it('stores a v1 key with --v1 beside the v2 key of an existing profile', async () => {
    await keysAdd({ profile: 'dev', baseUrl: BASE }, ctxWith({ stdin: V2 }));
    const ctx = ctxWith({ stdin: V1 });
    await keysAdd({ profile: 'dev', v1: true }, ctx); // --base-url may be left out for an existing profile
    expect((await stored()).get('dev')).toEqual({
      base_url: BASE,
      api_key: V2,
      v1_api_key: V1,
      auth_header: 'x-api-key',
    });
    expect(ctx.stderrText()).toContain('version 1 key service_pk_…');
    expect(ctx.stderrText()).toContain('http://127.0.0.1:4010/api/v1');
  });

  it('replaces the key of an existing profile and says so', async () => {
    await keysAdd({ profile: 'dev', baseUrl: BASE }, ctxWith({ stdin: V2 }));
    const ctx = ctxWith({ stdin: V2B });
    await keysAdd({ profile: 'dev', baseUrl: BASE }, ctx);
    expect((await stored()).get('dev')?.api_key).toBe(V2B);
    expect(ctx.stderrText()).toMatch(/^Replaced the key/);
  });

  it('the second profile is not the default unless --default', async () => {
    await keysAdd({ profile: 'a', baseUrl: BASE }, ctxWith({ stdin: V2 }));
    await keysAdd({ profile: 'b', baseUrl: 'https://crm.example.com/api/v2' }, ctxWith({ stdin: V2B }));
    expect((await stored()).dflt).toBe('a');
    const ctx = ctxWith({ stdin: V2B, globals: { output: 'json' } });
    await keysAdd({ profile: 'c', baseUrl: 'https://crm.example.com/api/v2', default: true }, ctx);
    expect((await stored()).dflt).toBe('c');
    expect(JSON.parse(ctx.stdoutText()).default).toBe(true);
  });

  it('stores --v1-base-url and --auth-header bearer; a v1 root equal to the derived one is not stored', async () => {
    await keysAdd(
      {
        profile: 'p',
        baseUrl: 'https://crm.example.com/api/v2',
        v1BaseUrl: 'https://legacy.example.com/api/v1',
        authHeader: 'bearer',
      },
      ctxWith({ stdin: V2 }),
    );
    expect((await stored()).get('p')).toEqual({
      base_url: 'https://crm.example.com/api/v2',
      v1_base_url: 'https://legacy.example.com/api/v1',
      api_key: V2,
      auth_header: 'bearer',
    });
    await keysAdd({ profile: 'q', baseUrl: BASE, v1BaseUrl: 'http://127.0.0.1:4010/api/v1' }, ctxWith({ stdin: V2 }));
    expect((await stored()).get('q')?.v1_base_url).toBeUndefined();
  });

  it('takes the global --base-url when the command has none', async () => {
    await keysAdd({ profile: 'g' }, ctxWith({ stdin: V2, globals: { baseUrl: BASE } }));
    expect((await stored()).get('g')?.base_url).toBe(BASE);
  });

  it.each([
    [{ profile: 'new' }, /--base-url is required/],
    [{ profile: 'new', baseUrl: 'http://crm.example.com/api/v2' }, /http:.*loopback/],
    [{ profile: 'new', baseUrl: BASE, v1BaseUrl: 'http://legacy.example.com/api/v1' }, /--v1-base-url/],
    [{ profile: 'new', baseUrl: 'http://127.0.0.1:4010/api/v1', v1: true }, /version 2 root/],
    [{ profile: 'new', baseUrl: BASE, authHeader: 'basic' }, /--auth-header must be/],
    [{ profile: 'bad name', baseUrl: BASE }, /Invalid profile name/],
  ])('refuses before reading the key: %o', async (opts, message) => {
    let read = false;
    const stdin = new Readable({
      read() {
        read = true;
        this.push(V2);
        this.push(null);
      },
    });
    // as the options of a caller other than commander (which allows only its --auth-header choices)
    const e = await refusal(keysAdd(opts as KeysAddOptions, ctxWith({ stdin })));
    expect(e.message).toMatch(message);
    expect(read).toBe(false);
    expect((await stored()).names).toEqual([]);
  });

  it('(control) a valid add does read the same kind of stdin', async () => {
    let read = false;
    const stdin = new Readable({
      read() {
        read = true;
        this.push(V2);
        this.push(null);
      },
    });
    await keysAdd({ profile: 'ok', baseUrl: BASE }, ctxWith({ stdin }));
    expect(read).toBe(true);
  });

  it('warns when no v1 root can be derived', async () => {
    const ctx = ctxWith({ stdin: V2 });
    await keysAdd({ profile: 'p', baseUrl: 'https://crm.example.com/v2' }, ctx);
    expect(ctx.stderrText()).toMatch(/does not end in \/api\/v2/);
  });
});
