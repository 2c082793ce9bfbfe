// Several ids in one process (`crm RESOURCE get|delete ID… | -`): ids from the arguments or standard
// input, one request per id `--concurrency` at a time through the one client (so its pacer paces them
// all), each record printed as in a list, in the order the ids were given, as soon as its turn comes.
// An id the server refuses (403, 404, 422) is named on stderr and the others go on: exit 9 at the end,
// or that error's own code when every id failed the same way. Any other error ends the run.
import { findResource } from '../../api/resources.js';
import { ForbiddenError, InterruptedError, NotFoundError, PartialFailureError, UsageError, ValidationError } from '../../http/errors.js';
import type { CrmError, ErrorInfo } from '../../http/errors.js';
import { recordPath } from '../../http/url.js';
import { plural } from '../../output/plural.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { createListWriter, type ListWriter } from '../../output/writers.js';
import { mapInOrder } from '../../util/in-order.js';
import type { Ctx } from '../context.js';
import { readStream } from '../shared/body.js';
import { outputOptions } from '../shared/output-options.js';

/** ids read from standard input at most (about 10 million ids) */
const MAX_STDIN_BYTES = 256 * 1024 * 1024;
/** the errors that belong to one id; any other (auth, 429 or 5xx after retries, network) ends the run */
const PER_ID: ReadonlyArray<new (...args: never[]) => CrmError> = [ForbiddenError, NotFoundError, ValidationError];

/** The command line asks for a list: more than one id, or `-` (however many lines it has). */
export function isMany(args: readonly string[]): boolean {
  return args.length !== 1 || args[0] === '-';
}

/** The ids: the arguments, with `-` replaced by standard input's lines (trimmed; blank lines skipped). */
export async function readIds(args: readonly string[], ctx: Ctx): Promise<string[]> {
  if (args.filter((a) => a === '-').length > 1) throw new UsageError("'-' (ids from standard input) may be given only once");
  const ids: string[] = [];
  for (const arg of args) {
    if (arg !== '-') {
      ids.push(arg);
      continue;
    }
    const tooBig = `standard input holds more than ${MAX_STDIN_BYTES / 1024 / 1024} MiB of ids: split it`;
    const text = await readStream(ctx.io.stdin, { max: MAX_STDIN_BYTES, tooBig, signal: ctx.signal });
    for (const line of text.split(/\r\n|\r|\n/)) if (line.trim() !== '') ids.push(line.trim());
  }
  return ids;
}

export interface ForIds {
  resource: string;
  ids: readonly string[];
  concurrency: number;
  /** past tense for the messages: `fetched`, `deleted` */
  done: string;
  /** one id's request (its path made already): the record to print */
  one(path: string, id: string): Promise<Record<string, unknown>>;
  /** table only: a line per id instead of a table of the records (`Deleted contact c_1.`) */
  line?: (id: string) => string;
}

type Outcome = { record: Record<string, unknown> } | { error: CrmError };

export async function runForIds(ctx: Ctx, o: ForIds): Promise<void> {
  const res = findResource(o.resource);
  const singular = res?.singular ?? o.resource;
  const paths = o.ids.map((id) => recordPath(o.resource, id)); // a malformed id refuses the run before anything is sent
  const format = ctx.format();
  const writer: ListWriter =
    format === 'table' && o.line
      ? { write: (_r) => undefined, end: async () => undefined }
      : createListWriter(format, ctx.io.stdout, outputOptions(ctx, { columns: res?.columns }));
  const failures: Array<{ id: string; error: CrmError }> = [];
  const run = async (id: string, i: number): Promise<Outcome> => {
    try {
      return { record: await o.one(paths[i]!, id) };
    } catch (error) {
      if (PER_ID.some((C) => error instanceof C)) return { error: error as CrmError };
      throw error;
    }
  };
  const emit = async (r: Outcome, i: number): Promise<void> => {
    const id = o.ids[i]!;
    if ('error' in r) {
      failures.push({ id, error: r.error });
      const status = r.error.status === undefined ? '' : ` (HTTP ${r.error.status})`;
      ctx.io.stderr.write(`${sanitizeForTerminal(`${singular} ${id}: ${r.error.message}`)}${status}\n`);
    } else if (format === 'table' && o.line) ctx.io.stdout.write(`${sanitizeForTerminal(o.line(id))}\n`);
    else await writer.write(r.record);
  };
  let started: number;
  try {
    started = await mapInOrder(o.ids, run, emit, { concurrency: o.concurrency, stop: () => ctx.signal.aborted });
  } finally {
    await writer.end().catch(() => undefined); // valid JSON even when the run ends early
  }
  if (o.ids.length === 0) ctx.warn(`No ${o.resource}: standard input held no ids.`);
  if (started < o.ids.length) {
    const did = started - failures.length;
    throw new InterruptedError(`interrupted: ${plural(did, singular, o.resource)} ${o.done}, ${o.ids.length - started} not started`);
  }
  throwFailures(failures, o.ids.length, plural(o.ids.length, singular, o.resource), o.done);
}

function throwFailures(failures: ReadonlyArray<{ id: string; error: CrmError }>, total: number, what: string, done: string): void {
  const first = failures[0]?.error;
  if (first === undefined) return;
  if (failures.length === total && failures.every((f) => f.error.exitCode === first.exitCode)) {
    // every id failed the same way: that error's own exit code, as with one id
    const Same = first.constructor as new (message: string, info?: ErrorInfo) => CrmError;
    throw new Same(`none of the ${what} ${total === 1 ? 'was' : 'were'} ${done} (each is named above)`, {
      status: first.status,
      code: first.code,
    });
  }
  throw new PartialFailureError(
    `${failures.length} of ${what} not ${done} (each is named above); the other ${total - failures.length} ${total - failures.length === 1 ? 'was' : 'were'} ${done}`,
  );
}
