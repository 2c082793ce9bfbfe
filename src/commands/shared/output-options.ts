// The writer options every printing command passes: the global --fields, colours, --wide, and the
// stderr notice (silenced by --quiet) that says what a table hid or cut to fit and how to see it.
import type { WriterOptions } from '../../output/writers.js';
import type { Ctx } from '../context.js';

export function outputOptions(ctx: Ctx, extra: WriterOptions = {}): WriterOptions {
  return {
    fields: ctx.globals.fields,
    color: ctx.globals.color,
    wide: ctx.globals.wide,
    notice: (message) => ctx.warn(message),
    ...extra,
  };
}

/** `-o json`/`-o ndjson` given explicitly: machine output on stdout for commands that otherwise only confirm on stderr. */
export function wantsJson(output: string | undefined): boolean {
  return output === 'json' || output === 'ndjson';
}
