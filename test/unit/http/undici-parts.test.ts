// src/http imports undici's parts from their files, not the package root (which loads all of undici:
// ~60 ms more per request command; src/http/undici-parts.d.ts). This fails when an undici update moves
// those files or changes what they export, so the shortcut is re-checked, not silently wrong.
import * as undici from 'undici';
import { describe, expect, it } from 'vitest';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import PoolClass from 'undici/lib/dispatcher/pool.js';
import ProxyAgentClass from 'undici/lib/dispatcher/proxy-agent.js';
import connect from 'undici/lib/api/api-connect.js';
import request from 'undici/lib/api/api-request.js';

describe("undici's parts", () => {
  it('are the very classes and methods the package root exports', () => {
    expect(PoolClass).toBe(undici.Pool);
    expect(AgentClass).toBe(undici.Agent);
    expect(ProxyAgentClass).toBe(undici.ProxyAgent);
    const methods = Object.getOwnPropertyDescriptors(undici.Dispatcher.prototype);
    expect(request).toBe(methods.request?.value);
    expect(connect).toBe(methods.connect?.value);
  });
});

// transport.ts sets V8's --liftoff-only because undici parses HTTP with llhttp compiled to
// WebAssembly, whose background tier-up kept each process alive 200–500 ms after its last request
// (measured again for issue 11: `contacts get` 353 ms with the flag, 647 ms without). When undici
// stops compiling WebAssembly there, the flag has no reason left: this fails, to drop it.
describe("undici's HTTP/1 parser", () => {
  it('is still llhttp compiled to WebAssembly (the reason for --liftoff-only)', async () => {
    const fs = await import('node:fs');
    const { createRequire } = await import('node:module');
    const file = createRequire(import.meta.url).resolve('undici/lib/dispatcher/client-h1.js');
    expect(fs.readFileSync(file, 'utf8')).toMatch(/WebAssembly\.compile|new WebAssembly\.Module/);
  });
});
