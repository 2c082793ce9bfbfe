// Fixed-window rate limiting (docs/sandbox.md, "Rate limits"). A window opens at the first
// request after the previous one ended and lasts `windowMs`; each counted request takes a unit.

export class FixedWindowLimiter {
  private windows = new Map<string, { start: number; used: number }>();

  constructor(
    public limit: number,
    public windowMs: number,
    private readonly now: () => number,
  ) {}

  /** The state of `id`'s window without taking a unit (`resetMs`: until this window ends). */
  peek(id: string) {
    const w = this.current(id);
    return { limit: this.limit, remaining: Math.max(0, this.limit - w.used), resetMs: Math.max(0, w.start + this.windowMs - this.now()) };
  }

  /** Takes one unit of `id`'s window (callers check `peek` first when several limits apply). */
  take(id: string) {
    this.current(id).used++;
    return this.peek(id);
  }

  /** Forget every window (new limits, or a reset). */
  clear(): void {
    this.windows.clear();
  }

  private current(id: string): { start: number; used: number } {
    const now = this.now();
    let w = this.windows.get(id);
    if (!w || now >= w.start + this.windowMs) {
      w = { start: now, used: 0 };
      this.windows.set(id, w);
    }
    return w;
  }
}

/** Seconds with up to three decimals (the delta form of `X-RateLimit-Reset`). */
export function secondsHeader(ms: number): string {
  return String(Math.max(0, Math.ceil(ms)) / 1000);
}

/** `X-RateLimit-Reset` as seconds until the reset (`delta`, default) or as a Unix time in seconds (`epoch`). */
export const RESET_FORMATS = ['delta', 'epoch'] as const;
export type ResetFormat = (typeof RESET_FORMATS)[number];
/** `Retry-After` as delta-seconds (`seconds`, default) or as an HTTP-date (`date`). */
export const RETRY_AFTER_FORMATS = ['seconds', 'date'] as const;
export type RetryAfterFormat = (typeof RETRY_AFTER_FORMATS)[number];

/** How the rate-limit headers are written (docs/sandbox.md, "Rate limits"); `now`: the server clock, for the epoch and date forms. */
export type HeaderFormat = { reset: ResetFormat; retryAfter: RetryAfterFormat; now: () => number };

/** `X-RateLimit-Reset` for a window that resets in `ms`. */
function resetHeader(ms: number, format: HeaderFormat): string {
  if (format.reset === 'epoch') return String(Math.ceil((format.now() + Math.max(0, ms)) / 1000));
  return secondsHeader(ms);
}

/** The headers of a 429 that asks for a wait of `ms`. `Retry-After`: whole seconds from 1 s on, below it `0.15` (tiny test windows need not sleep a second); or an IMF-fixdate. */
export function refusalHeaders(ms: number, format: HeaderFormat): Record<string, string> {
  const wait = Math.max(0, Math.ceil(ms));
  const date = () => new Date(Math.ceil((format.now() + wait) / 1000) * 1000).toUTCString();
  const retryAfter = format.retryAfter === 'date' ? date() : wait >= 1000 ? String(Math.ceil(wait / 1000)) : secondsHeader(wait);
  return { 'Retry-After': retryAfter, 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': resetHeader(ms, format) };
}

/** One counted request against several windows: every limiter takes a unit, or none and 429 (the first one's limit in the headers). */
export function takeAll(
  checks: Array<{ limiter: FixedWindowLimiter; id: string }>,
  format: HeaderFormat,
): { ok: boolean; headers: Record<string, string> } {
  const limit = { 'X-RateLimit-Limit': String(checks[0]!.limiter.limit) };
  const full = checks.map((c) => c.limiter.peek(c.id)).filter((s) => s.remaining <= 0);
  if (full.length > 0) return { ok: false, headers: { ...limit, ...refusalHeaders(Math.max(...full.map((s) => s.resetMs)), format) } };
  const tightest = checks.map((c) => c.limiter.take(c.id)).reduce((a, b) => (b.remaining < a.remaining ? b : a));
  return {
    ok: true,
    headers: { ...limit, 'X-RateLimit-Remaining': String(tightest.remaining), 'X-RateLimit-Reset': resetHeader(tightest.resetMs, format) },
  };
}
