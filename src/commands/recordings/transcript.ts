// `crm recordings transcript <id> [--out FILE]` (CONTRACT §8): one transcript, printed as JSON or
// written to FILE atomically. A recording without one is exit 5 with the reason.
import path from 'node:path';
import { InterruptedError, NotFoundError, UsageError } from '../../http/errors.js';
import { stringifyJson } from '../../json/exact-json.js';
import { waitForDrain } from '../../output/backpressure.js';
import { safeJson, sanitizeForTerminal } from '../../output/sanitize.js';
import { writeFileAtomic } from '../../util/atomic-file.js';
import type { Ctx } from '../context.js';
import type { TranscriptOptions } from './command.js';
import { getTranscript, recordingPath } from './transcript-source.js';

export async function runTranscript(opts: TranscriptOptions, ctx: Ctx): Promise<void> {
  recordingPath(opts.id); // a usage error before anything is sent
  if (opts.out !== undefined && opts.out.trim() === '') throw new UsageError('--out must name a file');
  const client = await ctx.client();
  const shownId = sanitizeForTerminal(opts.id);
  try {
    const result = await getTranscript(opts.id, {
      client,
      clock: ctx.clock,
      signal: ctx.signal,
      requestSignal: ctx.signal,
    });
    if (result.kind === 'none') {
      throw new NotFoundError(`recording ${shownId} has no transcript: ${result.reason}`, { code: 'NO_TRANSCRIPT' });
    }

    if (opts.out === undefined) {
      // safeJson: the same JSON, with what JSON.stringify leaves raw (C1, bidi controls) escaped.
      if (!ctx.io.stdout.write(`${safeJson(result.body, 2)}\n`)) await waitForDrain(ctx.io.stdout);
      return;
    }
    const target = path.resolve(opts.out);
    try {
      await writeFileAtomic(target, `${stringifyJson(result.body, 2)}\n`, 0o600);
    } catch (err) {
      throw new UsageError(`cannot write ${opts.out}: ${(err as Error).message}`, { cause: err });
    }
    ctx.warn(`Wrote the transcript of ${shownId} to ${sanitizeForTerminal(opts.out)}`);
  } catch (err) {
    if (ctx.signal.aborted && !(err instanceof InterruptedError)) {
      throw new InterruptedError('interrupted', { cause: err });
    }
    throw err;
  }
}
