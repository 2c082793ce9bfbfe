// The idempotency cache (docs/sandbox.md, "Idempotency"): per API key and Idempotency-Key, the fingerprint and
// answer, kept 24 h; a twin waits for the first. Saved with API keys as SHA-256 digests (spec, Authentication 2).
import { createHash } from 'node:crypto';
import { RawNumber, decimalValue, parseJson } from '../json/exact-json.js';
import { ApiError } from './responses.js';
import type { SandboxResponse } from './types.js';

/** 1–255 printable ASCII characters. */
export function isValidIdempotencyKey(key: string): boolean {
  return /^[\x20-\x7e]{1,255}$/.test(key);
}

/**
 * Canonical JSON: object keys sorted, so that whitespace and key order do not matter; numbers by their
 * exact value (src/json), so that two bodies apart only in a digit a double cannot hold are two bodies.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  // `12345678901234567891.0` is `12345678901234567891`; no double has a RawNumber's value
  if (value instanceof RawNumber) return decimalValue(value.text) ?? value.text;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What identifies "the same request": method, path (with query) and body compared as parsed JSON. */
export function fingerprint(method: string, path: string, rawBody: string): string {
  let body: string;
  try {
    body = rawBody.trim() === '' ? '' : canonicalJson(parseJson(rawBody));
  } catch {
    body = `raw:${rawBody}`;
  }
  return createHash('sha256').update(`${method.toUpperCase()}\n${path}\n${body}`).digest('hex');
}

/** `done` is absent while the first request runs; `wake` lets its twins go on. */
type Entry = {
  fingerprint: string;
  done?: { response: SandboxResponse; storedAt: number };
  ran: Promise<void>;
  wake: () => void;
};

/** One answered key as the data file holds it; it lives until stored_at + 24 h. */
export interface SavedIdempotencyEntry {
  api_key_sha256: string;
  key: string;
  fingerprint: string;
  stored_at: number;
  response: SandboxResponse;
}

const digest = (apiKey: string) => createHash('sha256').update(apiKey).digest('hex');

/** A replay, a 422, or the right to answer the key: `settle` with what ran (stored below 500) or with nothing. */
export type Claim = { replay: SandboxResponse } | { error: ApiError } | { settle: (ran?: SandboxResponse) => void };

export class IdempotencyCache {
  /** `{API key digest}\0{Idempotency-Key}` → entry (an Idempotency-Key is printable ASCII) */
  private entries = new Map<string, Entry>();
  replays = 0;
  /** called when an answer is stored or keys are forgotten (the data file's autosave listens) */
  onChange: () => void = () => {};

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = 24 * 60 * 60 * 1000,
  ) {}

  /** An entry in flight, or answered within the retention. */
  private live(entry: Entry | undefined, now = this.now()): entry is Entry {
    return entry !== undefined && !(entry.done && entry.done.storedAt + this.ttlMs <= now);
  }

  private set(id: string, fp: string, done?: Entry['done']): Entry {
    let wake!: () => void;
    const entry: Entry = { fingerprint: fp, done, ran: new Promise<void>((resolve) => (wake = resolve)), wake };
    this.entries.set(id, entry);
    return entry;
  }

  /** Claims `idemKey` of `apiKey` for a request of fingerprint `fp`; a twin of a running request waits for it. */
  async claim(apiKey: string, idemKey: string, fp: string): Promise<Claim> {
    const id = `${digest(apiKey)}\0${idemKey}`;
    for (let entry = this.entries.get(id); this.live(entry); entry = this.entries.get(id)) {
      if (entry.fingerprint !== fp) {
        const details = [{ header: 'Idempotency-Key', issue: 'reused' }];
        const message = 'This Idempotency-Key was already used with a different method, path or body';
        return { error: new ApiError(422, 'IDEMPOTENCY_KEY_REUSED', message, details) };
      }
      if (entry.done) {
        this.replays++;
        return { replay: entry.done.response };
      }
      await entry.ran;
    }
    const inflight = this.set(id, fp);
    const settle = (ran?: SandboxResponse) => {
      const ours = this.entries.get(id) === inflight; // not forgotten meanwhile
      if (ours && ran && ran.status < 500) {
        this.set(id, fp, { response: ran, storedAt: this.now() });
        this.onChange();
      } else if (ours) this.entries.delete(id);
      inflight.wake();
    };
    return { settle };
  }

  /** Forget every key (POST /__sandbox/forget-idempotency, reset). In-flight twins run for real. */
  clear(): void {
    for (const e of this.entries.values()) e.wake();
    this.entries.clear();
    this.onChange();
  }

  /** The answered keys still within the retention, for the data file. */
  snapshot(): SavedIdempotencyEntry[] {
    const now = this.now();
    return [...this.entries].flatMap(([id, e]) => {
      const { fingerprint, done } = e;
      if (!done || !this.live(e, now)) return [];
      const [api_key_sha256 = '', key = ''] = id.split('\0');
      return [{ api_key_sha256, key, fingerprint, stored_at: done.storedAt, response: done.response }];
    });
  }

  /** Adds the saved keys (from the data file), dropping those past the retention. */
  restore(saved: readonly SavedIdempotencyEntry[]): void {
    const now = this.now();
    for (const s of saved)
      if (s.stored_at + this.ttlMs > now)
        this.set(`${s.api_key_sha256}\0${s.key}`, s.fingerprint, { response: s.response, storedAt: s.stored_at });
  }
}
