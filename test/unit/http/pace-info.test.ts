// What the client tells of the rate limit (client.pace()): read from the pacer, never changing it.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../helpers/clock.js';
import { createClient, type CrmHttpClient } from '../../../src/http/client.js';
import { DEFAULT_WINDOW_MS, paceInfoOf, paceWatch, windowOf } from '../../../src/http/pace-info.js';
import { Pacer } from '../../../src/http/pacer.js';
import { type TestServer, sendJson, startServer, success } from './helpers.js';

const T = 1_000_000;
const view = { blockedUntil: 0, inFlight: 0 };

describe('paceInfoOf', () => {
  it("knows nothing before an answer: only the spec's window, its length not known", () => {
    expect(paceInfoOf(view, T)).toEqual({ windowMs: DEFAULT_WINDOW_MS, windowAtLeastMs: 0 });
  });
  it('reports the window the answers told, not waiting while some of it is left', () => {
    const told = { windowMs: 60_000 };
    expect(paceInfoOf({ ...view, limit: 200, remaining: 150, resetAt: T + 30_000, inFlight: 3 }, T, told)).toEqual({
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
      windowAtLeastMs: 0,
    });
  });
});

describe('paceWatch', () => {
  const headers = (remaining: number, reset: string) => ({
    'x-ratelimit-limit': '30',
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': reset,
  });

  it("started late in a window, the Resets seen are only the least its length can be: the spec's minute is reckoned with, and the pacer left as it was", () => {
    const clock = new FakeClock({ start: T });
    const pacer = new Pacer(clock);
    const watch = paceWatch(pacer, () => clock.now());
    expect(watch.info().windowMs).toBe(DEFAULT_WINDOW_MS);
    pacer.done({ seq: 1 }, headers(20, '0.5'));
    watch.observe();
    clock.advance(200);
    pacer.done({ seq: 2 }, headers(19, '0.3'));
    const before = pacer.snapshot();
    expect(watch.info()).toEqual({
      ...{ limit: 30, remaining: 19, resetAt: T + 500 },
      ...{ windowMs: DEFAULT_WINDOW_MS, windowAtLeastMs: 500 },
    });
    expect(pacer.snapshot()).toEqual(before);
  });

  it('an answer that opened its window tells its length: its Reset less the time its request was sent, no longer than the time-to-reset it said (the way there is not the window)', async () => {
    const clock = new FakeClock({ start: T });
    const pacer = new Pacer(clock);
    const watch = paceWatch(pacer, () => clock.now());
    const ticket = await pacer.acquire();
    pacer.sent(ticket);
    clock.advance(5);
    pacer.done(ticket, headers(29, '2'));
    watch.observe(); // as the client does after each answer
    clock.advance(1500);
    expect(watch.info()).toEqual({ limit: 30, remaining: 29, resetAt: T + 2005, windowMs: 2000 });
  });

  it('windowOf: the length told, or the longest time-to-reset when shorter; unless a Reset seen since was longer (a second allowed for whole seconds)', () => {
    expect(windowOf(2000, 1999)).toEqual({ windowMs: 1999 });
    expect(windowOf(2500, 2000)).toEqual({ windowMs: 2000 });
    expect(windowOf(2000, 2900)).toEqual({ windowMs: 2000 });
    expect(windowOf(2000, 3100)).toEqual({ windowMs: DEFAULT_WINDOW_MS, windowAtLeastMs: 3100 });
    expect(windowOf(undefined, 4000)).toEqual({ windowMs: DEFAULT_WINDOW_MS, windowAtLeastMs: 4000 });
    expect(windowOf(undefined, 90_000)).toEqual({ windowMs: 90_000, windowAtLeastMs: 90_000 });
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
    expect(client.pace()).toEqual({ windowMs: DEFAULT_WINDOW_MS, windowAtLeastMs: 0 });
    await client.request({ method: 'GET', path: '/contacts/con_1' });
    clock.advance(10_000);
    // the answer opened its window (199 of 200 left): the window is as long as its Reset from the sending
    expect(client.pace()).toEqual({ limit: 200, remaining: 199, resetAt: T + 59_998, windowMs: 59_998 });
  });
});
