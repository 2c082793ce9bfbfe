// Request bodies from the command line: `--data JSON | @file | -` and `--set field=value` /
// `--set field:=json` (CONTRACT §5); `--set` wins.
import { readFile } from 'node:fs/promises';
import { InterruptedError, UsageError } from '../../http/errors.js';
import { setOwn } from '../../util/set-own.js';
import { parseJson } from '../../json/exact-json.js';

export type JsonObject = Record<string, unknown>;

/** One `--set`: `a=b` sets the string "b"; `a:=5` the JSON value 5 (a number no double holds is sent exactly). */
export function parseSet(spec: string): [string, unknown] {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new UsageError(`--set '${spec}': expected field=value or field:=json`);
  if (spec[eq - 1] === ':') {
    const field = spec.slice(0, eq - 1);
    const raw = spec.slice(eq + 1);
    if (!field) throw new UsageError(`--set '${spec}': the field name is empty`);
    try {
      return [field, parseJson(raw)];
    } catch (err) {
      throw new UsageError(
        `--set ${field}:= expects JSON (a number, true/false, null, array or object), got '${raw}': ${(err as Error).message}`,
      );
    }
  }
  return [spec.slice(0, eq), spec.slice(eq + 1)];
}

/** --data merged with --set; a field is always an own key (`__proto__` included), never a prototype. */
export function applySets(body: JsonObject, sets: readonly string[]): JsonObject {
  const out = { ...body };
  for (const spec of sets) setOwn(out, ...parseSet(spec));
  return out;
}

/** Parses a JSON body that must be an object; `where` names the source in errors. */
export function parseJsonObject(text: string, where: string): JsonObject {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (err) {
    throw new UsageError(`${where} is not valid JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new UsageError(
      `${where} must be a JSON object ({...}), got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`,
    );
  }
  return value as JsonObject;
}

/** Reads `--data`: inline JSON, `@path`, or `-` for standard input. */
export async function readData(data: string | undefined, stdin: NodeJS.ReadableStream): Promise<JsonObject> {
  if (data === undefined) return {};
  if (data === '-') return parseJsonObject(await readStream(stdin), 'standard input (--data -)');
  if (data.startsWith('@')) {
    const path = data.slice(1);
    const text = await readFile(path, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read --data file ${path}: ${err.code ?? err.message}`);
    });
    return parseJsonObject(text, `--data file ${path}`);
  }
  return parseJsonObject(data, '--data');
}

export async function buildBody(
  opts: { data?: string; set?: readonly string[] },
  stdin: NodeJS.ReadableStream,
): Promise<JsonObject> {
  return applySets(await readData(opts.data, stdin), opts.set ?? []);
}

/** A stream's whole text; with `max`, more bytes is a UsageError saying `tooBig`. */
export async function readStream(
  stream: NodeJS.ReadableStream,
  limit?: { max: number; tooBig: string; signal?: AbortSignal },
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    if (limit?.signal?.aborted) throw new InterruptedError('Interrupted.');
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (limit && size > limit.max) throw new UsageError(limit.tooBig);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses `--param key=value` into a query object; `limit` and `cursor` have their own flags. */
export function parseParams(params: readonly string[]): Record<string, string> {
  const query: Record<string, string> = {};
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param '${p}': expected key=value`);
    const key = p.slice(0, eq);
    if (key === 'limit' || key === 'cursor') throw new UsageError(`--param ${key}: use --${key} instead`);
    setOwn(query, key, p.slice(eq + 1));
  }
  return query;
}
