// The idempotency cache (docs/sandbox.md, "Idempotency"): per API key and Idempotency-Key, the fingerprint and
// answer, kept 24 h; a twin waits for the first. Saved with API keys as SHA-256 digests (spec, Authentication 2).
import { createHash } from 'node:crypto';
import { ApiError } from './responses.js';
import type { SandboxResponse } from './types.js';

/** 1–255 printable ASCII characters. */
export function isValidIdempotencyKey(key: string): boolean {
  return /^[\x20-\x7e]{1,255}$/.test(key);
}

/** Canonical JSON: object keys sorted, so that whitespace and key order do not matter. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
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
    body = rawBody.trim() === '' ? '' : canonicalJson(JSON.parse(rawBody));
  } catch {
    body = `raw:${rawBody}`;
  }
  return createHash('sha256').update(`${method.toUpperCase()}\n${path}\n${body}`).digest('hex');
}

type Entry =
  | { state: 'inflight'; fingerprint: string; done: Promise<void>; settle: () => void }
  | { state: 'done'; fingerprint: string; response: SandboxResponse; storedAt: number };

/** One answered key as the data file holds it; it lives until stored_at + 24 h. */
export interface SavedIdempotencyEntry {
  api_key_sha256: string;
  key: string;
  fingerprint: string;
  stored_at: number;
  response: SandboxResponse;
}

const digest = (apiKey: string) => createHash('sha256').update(apiKey).digest('hex');

type Lookup =
  | { kind: 'miss'; claim: Claim }
  | { kind: 'replay'; response: SandboxResponse }
  | { kind: 'wait'; done: Promise<void> }
  | { kind: 'conflict'; error: ApiError };

/** The right to answer a key: `store` the response that ran, or `release` it unanswered. */
export type Claim = { store(response: SandboxResponse): void; release(): void };

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

  private expired(entry: Entry, now = this.now()): boolean {
    return entry.state === 'done' && entry.storedAt + this.ttlMs <= now;
  }

  lookup(apiKey: string, idemKey: string, fp: string): Lookup {
    const id = `${digest(apiKey)}\0${idemKey}`;
    const entry = this.entries.get(id);
    if (entry && !this.expired(entry)) {
      if (entry.fingerprint !== fp) {
        const details = [{ header: 'Idempotency-Key', issue: 'reused' }];
        const message = 'This Idempotency-Key was already used with a different method, path or body';
        return { kind: 'conflict', error: new ApiError(422, 'IDEMPOTENCY_KEY_REUSED', message, details) };
      }
      if (entry.state === 'inflight') return { kind: 'wait', done: entry.done };
      this.replays++;
      return { kind: 'replay', response: entry.response };
    }
    let settle!: () => void;
    const inflight: Entry = { state: 'inflight', fingerprint: fp, done: new Promise<void>((resolve) => (settle = resolve)), settle };
    this.entries.set(id, inflight);
    const ours = () => this.entries.get(id) === inflight; // not forgotten meanwhile
    const store = (response: SandboxResponse) => {
      if (ours()) {
        this.entries.set(id, { state: 'done', fingerprint: fp, response, storedAt: this.now() });
        this.onChange();
      }
      settle();
    };
    const release = () => {
      if (ours()) this.entries.delete(id);
      settle();
    };
    return { kind: 'miss', claim: { store, release } };
  }

  /** Forget every key (POST /__sandbox/forget-idempotency, reset). In-flight twins run for real. */
  clear(): void {
    for (const e of this.entries.values()) if (e.state === 'inflight') e.settle();
    this.entries.clear();
    this.onChange();
  }

  /** The answered keys still within the retention, for the data file. */
  snapshot(): SavedIdempotencyEntry[] {
    const now = this.now();
    return [...this.entries].flatMap(([id, e]) => {
      if (e.state !== 'done' || this.expired(e, now)) return [];
      const [api_key_sha256 = '', key = ''] = id.split('\0');
      return [{ api_key_sha256, key, fingerprint: e.fingerprint, stored_at: e.storedAt, response: e.response }];
    });
  }

  /** Adds the saved keys (from the data file), dropping those past the retention. */
  restore(saved: readonly SavedIdempotencyEntry[]): void {
    const now = this.now();
    for (const s of saved) {
      const entry: Entry = { state: 'done', fingerprint: s.fingerprint, response: s.response, storedAt: s.stored_at };
      if (!this.expired(entry, now)) this.entries.set(`${s.api_key_sha256}\0${s.key}`, entry);
    }
  }
}
