// Transcripts (docs/sandbox.md, "Recordings and transcripts"): tokenized download links that
// expire after the TTL, and transcript content derived deterministically from the recording id.
import { createHash } from 'node:crypto';
import { RESOURCES } from '../api/resources.js';
import { mulberry32, newToken, pick } from './random.js';

/** Where transcript links point, on the download origin (the resource table's `download`). */
export const DOWNLOAD_PATH = RESOURCES.find((r) => r.download)!.download!.path;

export class TranscriptTokens {
  private tokens = new Map<string, { recordingId: string; expiresAt: number }>();

  constructor(
    public ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** A fresh token for the recording, valid `ttlMs` and reusable while valid. */
  issue(recordingId: string): string {
    this.prune();
    const token = newToken();
    this.tokens.set(token, { recordingId, expiresAt: this.now() + this.ttlMs });
    return token;
  }

  /** The recording id of a valid token, else undefined (unknown or expired). */
  resolve(token: string): string | undefined {
    const entry = this.tokens.get(token);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.tokens.delete(token);
      return undefined;
    }
    return entry.recordingId;
  }

  clear(): void {
    this.tokens.clear();
  }

  private prune(): void {
    const now = this.now();
    for (const [token, entry] of this.tokens) if (entry.expiresAt <= now) this.tokens.delete(token);
  }
}

export interface Transcript {
  recording_id: string;
  language: string;
  duration_seconds: number;
  segments: Array<{ speaker: string; start_ms: number; end_ms: number; text: string }>;
}

const SPEAKERS = ['Alex Morgan', 'Sam Lee', 'Jordan Diaz', 'Riley Chen'];
const LINES = [
  'Thanks for making the time today.',
  'Could you walk me through your current process?',
  'We mostly track this in spreadsheets right now.',
  'That is exactly the gap we want to close.',
  'What would a successful rollout look like for you?',
  'Pricing depends on the number of seats.',
  'Let me loop in our technical lead for the integration.',
  'Can we schedule a follow-up for next week?',
  'I will send over the proposal this afternoon.',
  'Security review usually takes about two weeks.',
];

/** The transcript of a recording: the same id always gives the same transcript. */
export function transcriptFor(recordingId: string, durationSeconds?: number): Transcript {
  const seed = createHash('sha256').update(recordingId).digest().readUInt32BE(0);
  const random = mulberry32(seed);
  const count = 4 + Math.floor(random() * 9);
  const speakers = [pick(random, SPEAKERS), pick(random, SPEAKERS.slice().reverse())];
  const segments: Transcript['segments'] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const length = 2000 + Math.floor(random() * 8000);
    segments.push({ speaker: speakers[i % 2]!, start_ms: at, end_ms: at + length, text: pick(random, LINES) });
    at += length + Math.floor(random() * 500);
  }
  const duration = typeof durationSeconds === 'number' ? durationSeconds : Math.ceil(at / 1000);
  return { recording_id: recordingId, language: 'en', duration_seconds: duration, segments };
}
