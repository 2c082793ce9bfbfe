// Several ids in one process (`crm RESOURCE get|delete ID… | -`): ids from the arguments or standard
// input, one request per id `--concurrency` at a time through the one client (so its pacer paces them
// all), each record printed as in a list, in the order the ids were given, as soon as its turn comes.
// An id the server refuses (403, 404, 422) is named on stderr and the others go on: exit 9 at the end,
// or that error's own code when every id failed the same way. Any other error ends the run.
import { StringDecoder } from 'node:string_decoder';
import { findResource } from '../../api/resources.js';
import {
  ForbiddenError,
  InterruptedError,
  NotFoundError,
  PartialFailureError,
  UsageError,
  ValidationError,
} from '../../http/errors.js';
import type { CrmError, ErrorInfo } from '../../http/errors.js';
import { recordPath } from '../../http/url.js';
import { plural } from '../../output/plural.js';
import { sanitizeForTerminal } from '../../output/sanitize.js';
import { createListWriter, writeWhole, type ListWriter } from '../../output/writers.js';
import { mapInOrder } from '../../util/in-order.js';
import type { Ctx } from '../context.js';
import { outputOptions } from '../shared/output-options.js';

/** different ids remembered to send each once (about 110 MB of 18-character ids at most); past that a repeat is sent again */
const SEEN_MAX = 1_000_000;
/** longest line of standard input taken for an id */
const MAX_LINE = 64 * 1024;
/** the errors that belong to one id; any other (auth, 429 or 5xx after retries, network) ends the run */
const PER_ID: ReadonlyArray<new (...args: never[]) => CrmError> = [ForbiddenError, NotFoundError, ValidationError];

/** The command line asks for a list: more than one id, or `-` (however many lines it has). */
export function isMany(args: readonly string[]): boolean {
  return args.length !== 1 || args[0] === '-';
}

/**
 * The ids: the arguments, with `-` replaced by standard input's lines (trimmed; blank lines skipped),
 * read as they are used, so memory does not grow with standard input. Each id comes once: a repeat
 * is dropped and named at the end (notice()). A malformed argument is refused here, before anything
 * is sent; a malformed line is that id's own failure.
 */
export class Ids implements AsyncIterable<string> {
  /** ids handed out so far (each once) */
  count = 0;
  private readonly seen = new Set<string>();
  /** the ids given more than once (each a string of `seen` already: little memory) */
  private readonly repeated = new Set<string>();
  private buffered: readonly string[] | undefined;

  constructor(
    private readonly args: readonly string[],
    private readonly ctx: Ctx,
    resource: string,
  ) {
    if (args.filter((a) => a === '-').length > 1)
      throw new UsageError("'-' (ids from standard input) may be given only once");
    for (const id of args) if (id !== '-') recordPath(resource, id);
  }

  get fromStdin(): boolean {
    return this.args.includes('-');
  }

  /** Reads them all now (a confirmation shows the count); iterating later gives the same ids. */
  async all(): Promise<readonly string[]> {
    const list: string[] = [];
    for await (const id of this) list.push(id);
    return (this.buffered = list);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<string> {
    if (this.buffered) return yield* this.buffered;
    for (const arg of this.args) {
      for await (const id of arg === '-' ? stdinLines(this.ctx) : [arg]) {
        if (this.seen.has(id)) {
          this.repeated.add(id);
          continue;
        }
        if (this.seen.size < SEEN_MAX) this.seen.add(id);
        else if (this.seen.size === SEEN_MAX && this.count === SEEN_MAX) {
          this.ctx.warn(
            `More than ${SEEN_MAX.toLocaleString('en')} different ids: a later repeat of an id is not looked for (it is sent again).`,
          );
        }
        this.count++;
        yield id;
      }
    }
  }

  /** `Given more than once, deleted once: contact c_1.`: the ids dropped as repeats, if any */
  notice(singular: string, plural: string, done: string): string | undefined {
    const n = this.repeated.size;
    if (n === 0) return undefined;
    const names = [...this.repeated].slice(0, 5).map((id) => sanitizeForTerminal(id));
    const more = n > names.length ? `, … (${n} in all)` : '';
    return `Given more than once, ${done} once: ${n === 1 ? singular : plural} ${names.join(', ')}${more}.`;
  }
}

/** Standard input's lines, trimmed, blank ones skipped, as they arrive. */
async function* stdinLines(ctx: Ctx): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of ctx.io.stdin as AsyncIterable<Buffer | string>) {
    if (ctx.signal.aborted) throw new InterruptedError('Interrupted.');
    const lines = (rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk))).split(/\r\n|\r|\n/);
    rest = lines.pop()!;
    if (rest.length > MAX_LINE)
      throw new UsageError(`standard input has a line longer than ${MAX_LINE} characters: not an id`);
    for (const line of lines) if (line.trim() !== '') yield line.trim();
  }
  rest += decoder.end();
  if (rest.trim() !== '') yield rest.trim();
}

export interface ForIds {
  resource: string;
  ids: Ids;
  concurrency: number;
  /** past tense for the messages: `fetched`, `deleted` */
  done: string;
  /** one id's request (its path made already): the record to print */
  one(path: string, id: string): Promise<Record<string, unknown>>;
  /** table only: a line per id instead of a table of the records (`Deleted contact c_1.`) */
  line?: (id: string) => string;
}

type Outcome = { id: string } & ({ record: Record<string, unknown> } | { error: CrmError });

export async function runForIds(ctx: Ctx, o: ForIds): Promise<void> {
  const res = findResource(o.resource);
  const singular = res?.singular ?? o.resource;
  const format = ctx.format();
  const writer: ListWriter =
    format === 'table' && o.line
      ? { write: (_r) => undefined, end: async () => undefined }
      : createListWriter(format, ctx.io.stdout, outputOptions(ctx, { columns: res?.columns }));
  const failures: Array<{ id: string; error: CrmError }> = [];
  const run = async (id: string): Promise<Outcome> => {
    try {
      return { id, record: await o.one(recordPath(o.resource, id), id) };
    } catch (error) {
      // a malformed line of standard input ('.', '..') is that id's failure, as a 404 would be
      if (error instanceof UsageError || PER_ID.some((C) => error instanceof C))
        return { id, error: error as CrmError };
      throw error;
    }
  };
  const emit = async (r: Outcome): Promise<void> => {
    const id = r.id;
    if ('error' in r) {
      failures.push({ id, error: r.error });
      const status = r.error.status === undefined ? '' : ` (HTTP ${r.error.status})`;
      ctx.io.stderr.write(`${sanitizeForTerminal(`${singular} ${id}: ${r.error.message}`)}${status}\n`);
    } else if (format === 'table' && o.line) ctx.io.stdout.write(`${sanitizeForTerminal(o.line(id))}\n`);
    else await writer.write(r.record);
  };
  let started = 0;
  await writeWhole(writer, async () => {
    started = await mapInOrder(o.ids, run, emit, { concurrency: o.concurrency, stop: () => ctx.signal.aborted });
  });
  const total = o.ids.count;
  if (total === 0) ctx.warn(`No ${o.resource}: standard input held no ids.`);
  const repeats = o.ids.notice(singular, o.resource, o.done);
  if (repeats) ctx.warn(repeats);
  if (started < total) {
    const did = started - failures.length;
    throw new InterruptedError(`interrupted: ${plural(did, singular, o.resource)} ${o.done}, the rest not started`);
  }
  throwFailures(failures, total, plural(total, singular, o.resource), o.done);
}

function throwFailures(
  failures: ReadonlyArray<{ id: string; error: CrmError }>,
  total: number,
  what: string,
  done: string,
): void {
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
