// What the client tells of the rate limit (client.pace()): read from the pacer, never changing it.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import { createClient, type CrmHttpClient } from '../../../src/http/client.js';
import { DEFAULT_WINDOW_MS, paceInfoOf, paceWatch } from '../../../src/http/pace-info.js';
import { Pacer } from '../../../src/http/pacer.js';
import { type TestServer, sendJson, startServer, success } from './helpers.js';

const T = 1_000_000;
const view = { blockedUntil: 0, inFlight: 0 };

describe('paceInfoOf', () => {
  it('knows nothing before an answer: only the default window', () => {
    expect(paceInfoOf(view, T)).toEqual({ windowMs: DEFAULT_WINDOW_MS });
  });
  it('reports the window the answers told, not waiting while some of it is left', () => {
    expect(paceInfoOf({ ...view, limit: 200, remaining: 150, resetAt: T + 30_000, inFlight: 3 }, T, 60_000)).toEqual({
      limit: 200,
      remaining: 150,
      resetAt: T + 30_000,
      windowMs: 60_000,
    });
  });
  it('is waiting until the reset when the window is used up (in flight included)', () => {
    expect(paceInfoOf({ ...view, limit: 200, remaining: 0, resetAt: T + 12_000 }, T).waitingUntil).toBe(T + 12_000);
    expect(paceInfoOf({ ...view, limit: 200, remaining: 2, resetAt: T + 12_000, inFlight: 2 }, T).waitingUntil).toBe(
      T + 12_000,
    );
  });
  it('is waiting until a 429 Retry-After ends', () => {
    expect(
      paceInfoOf({ ...view, blockedUntil: T + 5000, limit: 200, remaining: 10, resetAt: T + 1000 }, T).waitingUntil,
    ).toBe(T + 5000);
  });
  it('reads a window past its reset as a fresh one, with the full limit (as the pacer rolls it over)', () => {
    expect(paceInfoOf({ ...view, limit: 200, remaining: 0, resetAt: T - 1 }, T)).toEqual({
      limit: 200,
      remaining: 200,
      windowMs: 60_000,
    });
  });
});

describe('paceWatch', () => {
  it('learns the window from the longest time-to-reset seen, and leaves the pacer as it was', () => {
    const clock = new FakeClock({ start: T });
    const pacer = new Pacer(clock);
    const watch = paceWatch(pacer, () => clock.now());
    expect(watch.info().windowMs).toBe(DEFAULT_WINDOW_MS);
    const answer = (remaining: number, reset: string) =>
      pacer.done(
        { seq: 1e9 - remaining },
        { 'x-ratelimit-limit': '30', 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': reset },
      );
    answer(29, '0.5');
    watch.observe();
    clock.advance(200);
    answer(28, '0.3');
    const before = pacer.snapshot();
    expect(watch.info()).toEqual({ limit: 30, remaining: 28, resetAt: T + 500, windowMs: 500 });
    expect(pacer.snapshot()).toEqual(before);
  });
});

describe('client.pace()', () => {
  let server: TestServer | undefined;
  let client: CrmHttpClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });
  it('says after the first answer what the server reported: 199 of 200 left, the window a minute', async () => {
    server = await startServer((_req, res) =>
      sendJson(res, 200, success({ id: 'con_1' }), {
        'x-ratelimit-limit': '200',
        'x-ratelimit-remaining': '199',
        'x-ratelimit-reset': '59.998',
      }),
    );
    const clock = new FakeClock({ start: T });
    client = createClient({
      baseUrl: server.baseUrl,
      apiKey: 'service_live_abcdefghijklmnopqrstuvwxf3a9',
      authHeader: 'x-api-key',
      clock,
      pacer: new Pacer(clock),
    });
    expect(client.pace()).toEqual({ windowMs: DEFAULT_WINDOW_MS });
    await client.request({ method: 'GET', path: '/contacts/con_1' });
    clock.advance(10_000);
    expect(client.pace()).toEqual({ limit: 200, remaining: 199, resetAt: T + 59_998, windowMs: 59_998 });
  });
});
