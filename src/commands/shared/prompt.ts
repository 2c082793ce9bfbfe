// Yes/no questions on a terminal. Prompts happen only when stdin and stdout are both TTYs.
import { createInterface } from 'node:readline/promises';
import type { Ctx } from '../context.js';

export async function confirm(ctx: Ctx, question: string): Promise<boolean> {
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr, terminal: true });
  try {
    const answer = await rl.question(`${question} [y/N] `, { signal: ctx.signal });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
