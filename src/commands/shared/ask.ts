// One question on standard error, answered on the terminal: the confirmations of deletes.
import { createInterface } from 'node:readline/promises';
import { InterruptedError } from '../../http/errors.js';
import type { Ctx } from '../context.js';

/** The answer, trimmed; Ctrl-C (or the run's signal) is an interruption (exit 130) saying nothing was done. */
export async function ask(ctx: Ctx, question: string, nothingDone: string): Promise<string> {
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr, terminal: true });
  try {
    return (await rl.question(question, { signal: ctx.signal })).trim();
  } catch (err) {
    if ((err as Error).name === 'AbortError' || ctx.signal.aborted) {
      ctx.io.stderr.write('\n');
      throw new InterruptedError(`interrupted: ${nothingDone}`, { cause: err });
    }
    throw err;
  } finally {
    rl.close();
  }
}
