// The idempotency cache (docs/sandbox.md, "Idempotency"): per API key, per Idempotency-Key,
// the request's fingerprint and its answer, kept 24 h. A twin that arrives while the first is
// still running waits for it.
import { createHash } from 'node:crypto';
import { ApiError } from './errors.js';
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
    const entries = Object.keys(value as object)
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
  | { state: 'done'; fingerprint: string; response: SandboxResponse; expiresAt: number };

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
  private byApiKey = new Map<string, Map<string, Entry>>();
  replays = 0;

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = IDEMPOTENCY_TTL_MS,
  ) {}

  lookup(apiKey: string, idemKey: string, fp: string): Lookup {
    let entries = this.byApiKey.get(apiKey);
    if (!entries) {
      entries = new Map();
      this.byApiKey.set(apiKey, entries);
    }
    const entry = entries.get(idemKey);
    if (entry?.state === 'done' && entry.expiresAt <= this.now()) entries.delete(idemKey);
    else if (entry) {
      if (entry.fingerprint !== fp) {
        return {
          kind: 'conflict',
          error: new ApiError(
            422,
            'IDEMPOTENCY_KEY_REUSED',
            'This Idempotency-Key was already used with a different method, path or body',
            [{ header: 'Idempotency-Key', issue: 'reused' }],
          ),
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
          map.set(idemKey, { state: 'done', fingerprint: fp, response, expiresAt: this.now() + this.ttlMs });
          settle();
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
  }
}
