// `crm recordings transcript <id> [--out FILE]` against the real sandbox.
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runTranscript } from '../../../src/commands/recordings/transcript.js';
import { NotFoundError, UsageError } from '../../../src/http/errors.js';
import { transcriptFor } from '../../../src/sandbox/downloads.js';
import { interceptRecordingGets, realSleep, useRecordingsSandbox } from './helpers.js';

const env = useRecordingsSandbox();
const DEFAULT_LIMITS = { transcript_ttl_ms: 300_000, download_rate_limit: 1000, download_window_ms: 1000 };

beforeEach(async () => {
  await env.control('/limits', DEFAULT_LIMITS);
});

async function recordingWith(status: 'ready' | 'processing' | 'no_audio'): Promise<Record<string, any>> {
  const rec = (await env.recordings()).find((r) => r.transcript_status === status);
  if (!rec) throw new Error(`the seed has no ${status} recording`);
  return rec;
}

const downloads = async (from: number) => (await env.requests(from)).filter((e) => e.path.startsWith('/transcripts/'));

describe('crm recordings transcript', () => {
  it('prints the transcript as JSON', async () => {
    const rec = await recordingWith('ready');
    const ctx = env.ctx();
    await runTranscript({ id: rec.id }, ctx);
    expect(JSON.parse(ctx.stdoutText())).toEqual(transcriptFor(rec.id, rec.duration_seconds));
  });

  it('writes --out FILE atomically and says so on stderr', async () => {
    const rec = await recordingWith('ready');
    const dir = env.tmpDir();
    const file = path.join(dir, 'board.json');
    const ctx = env.ctx();
    await runTranscript({ id: rec.id, out: file }, ctx);
    expect(ctx.stdoutText()).toBe('');
    expect(ctx.stderrText()).toContain('board.json');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(transcriptFor(rec.id, rec.duration_seconds));
    expect(fs.readdirSync(dir)).toEqual(['board.json']);
  });

  it.each([
    ['processing', /still being transcribed, try again later/],
    ['no_audio', /produced no audio/],
  ] as const)('a %s recording is exit 5 with the reason, and nothing is downloaded', async (status, reason) => {
    const rec = await recordingWith(status);
    const from = await env.mark();
    const err = await runTranscript({ id: rec.id }, env.ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).exitCode).toBe(5);
    expect((err as Error).message).toMatch(reason);
    expect(await downloads(from)).toEqual([]);
  });

  it('gets a fresh link when the first one expired', async () => {
    const rec = await recordingWith('ready');
    // the first link issued expired (a TTL of 0), the fresh one to live: not a short TTL the first link is
    // left to outlive, which a loaded machine's fresh link outlived too
    await env.control('/limits', { ...DEFAULT_LIMITS, transcript_ttl_ms: 0 });
    const client = interceptRecordingGets(env.client(), async (_id, nth) => {
      if (nth === 1) await env.control('/limits', DEFAULT_LIMITS);
    });
    const from = await env.mark();
    const ctx = env.ctx({ client });
    await runTranscript({ id: rec.id }, ctx);
    expect(JSON.parse(ctx.stdoutText())).toEqual(transcriptFor(rec.id, rec.duration_seconds));
    expect((await downloads(from)).map((e) => e.status)).toEqual([404, 200]);
    expect(client.gets.get(rec.id)).toBe(2);
  });

  it('gives up after 3 fresh links (exit 5)', async () => {
    const rec = await recordingWith('ready');
    await env.control('/limits', { ...DEFAULT_LIMITS, transcript_ttl_ms: 0 });
    const client = interceptRecordingGets(env.client(), () => realSleep(5));
    const from = await env.mark();
    const err = await runTranscript({ id: rec.id }, env.ctx({ client })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toMatch(/kept expiring/);
    expect((await downloads(from)).map((e) => e.status)).toEqual([404, 404, 404, 404]);
  });

  it('waits Retry-After on a 429 and then succeeds', async () => {
    const rec = await recordingWith('ready');
    await env.control('/limits', { ...DEFAULT_LIMITS, download_rate_limit: 1, download_window_ms: 400 });
    // the window's only request, right before crm's download (not before its reads: they may outlast the window)
    const client = interceptRecordingGets(env.client(), async (_id, nth) => {
      if (nth === 1) await fetch(`${env.sb.url}/transcripts/download/used-up`);
    });
    const from = await env.mark();
    const ctx = env.ctx({ client });
    await runTranscript({ id: rec.id }, ctx);
    expect(JSON.parse(ctx.stdoutText())).toEqual(transcriptFor(rec.id, rec.duration_seconds));
    expect((await downloads(from)).filter((e) => !e.path.endsWith('/used-up')).map((e) => e.status)).toEqual([
      429, 200,
    ]);
  });

  it('sends the id as one encoded path segment, and refuses . and ..', async () => {
    const from = await env.mark();
    const err = await runTranscript({ id: '../../contacts' }, env.ctx()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    const log = await env.requests(from);
    expect(log.map((e) => e.path)).toEqual(['/api/v2/recordings/..%2F..%2Fcontacts']);

    const before = await env.mark();
    for (const id of ['..', '.', '']) {
      await expect(runTranscript({ id }, env.ctx())).rejects.toBeInstanceOf(UsageError);
    }
    expect(await env.requests(before)).toEqual([]);
  });
});
