// The writer options every printing command passes: the global --fields, colours, --wide, and the
// stderr notice (silenced by --quiet) that says what a table hid or cut to fit and how to see it.
import { writeRecord, type WriterOptions } from '../../output/writers.js';
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

/** `record` on stdout when `-o json`/`-o ndjson` is given explicitly: for commands that otherwise only confirm on stderr. */
export async function printIfJson(ctx: Ctx, record: Record<string, unknown>): Promise<void> {
  const format = ctx.globals.output;
  if (format === 'json' || format === 'ndjson') await writeRecord(format, ctx.io.stdout, record);
}
