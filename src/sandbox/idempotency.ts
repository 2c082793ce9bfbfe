// The idempotency cache (docs/sandbox.md, "Idempotency"): per API key, per Idempotency-Key,
// the request's fingerprint and its answer, kept 24 h. A twin that arrives while the first is
// still running waits for it. Answered keys are saved in the data file with the records (a real
// service keeps its keys across restarts); API keys appear there only as SHA-256 digests (spec,
// Authentication rule 2), which is also how the cache files them in memory.
import { createHash } from 'node:crypto';
import { ApiError } from './responses.js';
import type { SandboxResponse } from './types.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

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

/** One answered key as the data file holds it. */
export interface SavedIdempotencyEntry {
  api_key_sha256: string;
  key: string;
  fingerprint: string;
  /** when the answer was stored, ms since the epoch: the entry lives until stored_at + 24 h */
  stored_at: number;
  response: SandboxResponse;
}

const digest = (apiKey: string) => createHash('sha256').update(apiKey).digest('hex');

export type Lookup =
  | { kind: 'miss'; claim: Claim }
  | { kind: 'replay'; response: SandboxResponse }
  | { kind: 'wait'; done: Promise<void> }
  | { kind: 'conflict'; error: ApiError };

/** The right to answer a key: `store` the response that ran, or `release` it unanswered. */
export interface Claim {
  store(response: SandboxResponse): void;
  release(): void;
}

export class IdempotencyCache {
  /** API key digest → Idempotency-Key → entry */
  private byApiKey = new Map<string, Map<string, Entry>>();
  replays = 0;
  /** called when an answer is stored or keys are forgotten (the data file's autosave listens) */
  onChange: () => void = () => {};

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {}

  private expired(entry: Entry, now = this.now()): boolean {
    return entry.state === 'done' && entry.storedAt + this.ttlMs <= now;
  }

  private entriesOf(apiKeyDigest: string): Map<string, Entry> {
    let entries = this.byApiKey.get(apiKeyDigest);
    if (!entries) this.byApiKey.set(apiKeyDigest, (entries = new Map<string, Entry>()));
    return entries;
  }

  lookup(apiKey: string, idemKey: string, fp: string): Lookup {
    const entries = this.entriesOf(digest(apiKey));
    const entry = entries.get(idemKey);
    if (entry && this.expired(entry)) entries.delete(idemKey);
    else if (entry) {
      if (entry.fingerprint !== fp) {
        return {
          kind: 'conflict',
          error: new ApiError(422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different method, path or body', [
            { header: 'Idempotency-Key', issue: 'reused' },
          ]),
        };
      }
      if (entry.state === 'inflight') return { kind: 'wait', done: entry.done };
      this.replays++;
      return { kind: 'replay', response: entry.response };
    }
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const inflight: Entry = { state: 'inflight', fingerprint: fp, done, settle };
    entries.set(idemKey, inflight);
    const map = entries;
    return {
      kind: 'miss',
      claim: {
        store: (response) => {
          if (map.get(idemKey) !== inflight) return settle();
          map.set(idemKey, { state: 'done', fingerprint: fp, response, storedAt: this.now() });
          settle();
          this.onChange();
        },
        release: () => {
          if (map.get(idemKey) === inflight) map.delete(idemKey);
          settle();
        },
      },
    };
  }

  /** Forget every key (POST /__sandbox/forget-idempotency, reset). In-flight twins run for real. */
  clear(): void {
    for (const entries of this.byApiKey.values()) {
      for (const e of entries.values()) if (e.state === 'inflight') e.settle();
    }
    this.byApiKey.clear();
    this.onChange();
  }

  /** The answered keys still within the retention, for the data file (in-flight ones are not saved). */
  snapshot(): SavedIdempotencyEntry[] {
    const now = this.now();
    const out: SavedIdempotencyEntry[] = [];
    for (const [apiKeyDigest, entries] of this.byApiKey) {
      for (const [key, e] of entries) {
        if (e.state !== 'done' || this.expired(e, now)) continue;
        out.push({ api_key_sha256: apiKeyDigest, key, fingerprint: e.fingerprint, stored_at: e.storedAt, response: e.response });
      }
    }
    return out;
  }

  /** Adds the saved keys (from the data file), dropping those past the retention. */
  restore(saved: readonly SavedIdempotencyEntry[]): void {
    const now = this.now();
    for (const s of saved) {
      const entry: Entry = { state: 'done', fingerprint: s.fingerprint, response: s.response, storedAt: s.stored_at };
      if (!this.expired(entry, now)) this.entriesOf(s.api_key_sha256).set(s.key, entry);
    }
  }
}
