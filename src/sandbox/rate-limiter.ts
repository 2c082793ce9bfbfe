// Window rate limiting (docs/sandbox.md, "Rate limits"), of either shape a real server uses. Fixed:
// a window opens at the first request after the previous one ended and lasts `windowMs`; each
// counted request takes a unit. Sliding (a sliding log): a request counts for `windowMs` after it
// was taken, so a unit frees when the oldest counted request leaves the window. A sliding window's
// X-RateLimit-Reset is, by server, the time until the window is whole again (`sliding`: the newest
// request leaves it) or until the next unit frees (`sliding-oldest`: the oldest request leaves it).

export const LIMIT_KINDS = ['fixed', 'sliding', 'sliding-oldest'] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

/** One id's window: `resetMs` until it is whole again (every unit free), `retryMs` until the next unit frees. */
export interface WindowState {
  limit: number;
  remaining: number;
  resetMs: number;
  retryMs: number;
}

export class WindowLimiter {
  /** fixed: the window's start and units used; sliding: when each counted request was taken, oldest first */
  private windows = new Map<string, { start: number; used: number; log: number[] }>();

  constructor(
    public limit: number,
    public windowMs: number,
    private readonly now: () => number,
    public kind: LimitKind = 'fixed',
  ) {}

  /** The state of `id`'s window without taking a unit. */
  peek(id: string): WindowState {
    const w = this.current(id);
    const now = this.now();
    if (this.kind === 'fixed') {
      const resetMs = Math.max(0, w.start + this.windowMs - now);
      return { limit: this.limit, remaining: Math.max(0, this.limit - w.used), resetMs, retryMs: resetMs };
    }
    const { log } = w;
    const until = (at: number | undefined) => (at === undefined ? 0 : Math.max(0, at + this.windowMs - now));
    // a unit frees when the oldest request beyond the limit's last `limit - 1` leaves the window
    const retryMs = log.length >= this.limit ? until(log[log.length - this.limit]) : 0;
    const resetMs = this.kind === 'sliding-oldest' ? until(log[0]) : until(log.at(-1));
    return { limit: this.limit, remaining: Math.max(0, this.limit - log.length), resetMs, retryMs };
  }

  /** Takes one unit of `id`'s window (callers check `peek` first when several limits apply). */
  take(id: string): WindowState {
    const w = this.current(id);
    if (this.kind !== 'fixed') w.log.push(this.now());
    else w.used++;
    return this.peek(id);
  }

  /** Forget every window (new limits, a new kind, or a reset). */
  clear(): void {
    this.windows.clear();
  }

  private current(id: string): { start: number; used: number; log: number[] } {
    const now = this.now();
    let w = this.windows.get(id);
    if (!w || (this.kind === 'fixed' && now >= w.start + this.windowMs)) {
      w = { start: now, used: 0, log: [] };
      this.windows.set(id, w);
    }
    if (this.kind !== 'fixed') {
      let gone = 0;
      while (gone < w.log.length && w.log[gone]! + this.windowMs <= now) gone++;
      if (gone > 0) w.log.splice(0, gone);
    }
    return w;
  }
}

/** Seconds with up to three decimals (the delta form of `X-RateLimit-Reset`). */
export function secondsHeader(ms: number): string {
  return String(Math.max(0, Math.ceil(ms)) / 1000);
}

/**
 * `X-RateLimit-Reset` as seconds until the reset with up to three decimals (`delta`, default), as
 * whole seconds rounded up (`seconds`), as a Unix time in whole seconds rounded up (`epoch`); or no
 * `X-RateLimit-*` header at all (`none`: only a 429's `Retry-After` tells anything).
 */
export const RESET_FORMATS = ['delta', 'seconds', 'epoch', 'none'] as const;
export type ResetFormat = (typeof RESET_FORMATS)[number];
/** `Retry-After` as delta-seconds (`seconds`, default) or as an HTTP-date (`date`). */
export const RETRY_AFTER_FORMATS = ['seconds', 'date'] as const;
export type RetryAfterFormat = (typeof RETRY_AFTER_FORMATS)[number];

/** How the rate-limit headers are written (docs/sandbox.md, "Rate limits"); `now`: the server clock, for the epoch and date forms. */
export type HeaderFormat = { reset: ResetFormat; retryAfter: RetryAfterFormat; now: () => number };

/** The `X-RateLimit-*` headers of a window (none in the `none` form). */
function windowHeaders(
  s: { limit: number; remaining: number; resetMs: number },
  format: HeaderFormat,
): Record<string, string> {
  const ms = Math.max(0, s.resetMs);
  if (format.reset === 'none') return {};
  const reset =
    format.reset === 'epoch'
      ? String(Math.ceil((format.now() + ms) / 1000))
      : format.reset === 'seconds'
        ? String(Math.ceil(ms / 1000))
        : secondsHeader(ms);
  return {
    'X-RateLimit-Limit': String(s.limit),
    'X-RateLimit-Remaining': String(s.remaining),
    'X-RateLimit-Reset': reset,
  };
}

/**
 * The headers of a 429 that asks for a wait of `ms` (the window whole again in `resetMs`, `limit`
 * units). `Retry-After`: whole seconds from 1 s on, below it `0.15` (tiny test windows need not sleep
 * a second); or an IMF-fixdate.
 */
export function refusalHeaders(
  ms: number,
  format: HeaderFormat,
  window = { limit: 0, resetMs: ms },
): Record<string, string> {
  const wait = Math.max(0, Math.ceil(ms));
  const date = () => new Date(Math.ceil((format.now() + wait) / 1000) * 1000).toUTCString();
  const retryAfter =
    format.retryAfter === 'date' ? date() : wait >= 1000 ? String(Math.ceil(wait / 1000)) : secondsHeader(wait);
  const headers: Record<string, string> = {
    'Retry-After': retryAfter,
    ...windowHeaders({ ...window, remaining: 0 }, format),
  };
  if (window.limit <= 0) delete headers['X-RateLimit-Limit'];
  return headers;
}

/** One counted request against several windows: every limiter takes a unit, or none and 429 (the first one's limit in the headers). */
export function takeAll(
  checks: Array<{ limiter: WindowLimiter; id: string }>,
  format: HeaderFormat,
): { ok: boolean; headers: Record<string, string> } {
  const limit = checks[0]!.limiter.limit;
  const full = checks.map((c) => c.limiter.peek(c.id)).filter((s) => s.remaining <= 0);
  if (full.length > 0) {
    const window = { limit, resetMs: Math.max(...full.map((s) => s.resetMs)) };
    return { ok: false, headers: refusalHeaders(Math.max(...full.map((s) => s.retryMs)), format, window) };
  }
  const tightest = checks.map((c) => c.limiter.take(c.id)).reduce((a, b) => (b.remaining < a.remaining ? b : a));
  return { ok: true, headers: windowHeaders({ ...tightest, limit }, format) };
}
