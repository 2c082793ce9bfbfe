// The import's progress line (progress-text.ts says what it shows) on a terminal.
import type { ImportProgress } from '../../import/index.js';
import { createProgress } from '../../output/progress.js';
import type { Ctx } from '../context.js';

/**
 * The progress line on a terminal, redrawn each second too (a wait for the rate limit counts down and the
 * ETA moves while no row finishes); `pause` takes it off the screen while a question is asked.
 */
export function liveProgress(ctx: Ctx, text: (p: ImportProgress) => string) {
  const enabled = Boolean(ctx.io.stderr.isTTY) && !ctx.globals.quiet;
  const make = () => createProgress({ stream: ctx.io.stderr, enabled, color: ctx.globals.stderrColor });
  let line = make();
  let last: ImportProgress | undefined;
  const tick = setInterval(() => last && line.update(text(last)), 1000);
  tick.unref();
  return {
    update(p: ImportProgress) {
      last = p;
      line.update(text(p));
    },
    async pause<T>(f: () => Promise<T>): Promise<T> {
      await line.stop();
      try {
        return await f();
      } finally {
        line = make();
      }
    },
    stop() {
      clearInterval(tick);
      return line.stop();
    },
  };
}
