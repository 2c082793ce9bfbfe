// How `keys add` gets a key: piped standard input, or a hidden prompt on a terminal. Never a flag
// (CONTRACT §2: it would leak into shell history and `ps`).
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { InterruptedError, UsageError } from '../../http/errors.js';
import type { Ctx } from '../context.js';

/** More than any key; a file piped by mistake is refused rather than read whole. */
export const MAX_KEY_INPUT = 16 * 1024;

export async function readKey(ctx: Ctx, prompt: string): Promise<string> {
  if (ctx.interactive()) {
    return promptHidden(ctx.io.stdin, ctx.io.stderr, prompt, ctx.signal);
  }
  if (ctx.io.stdin.isTTY) {
    throw new UsageError('Cannot prompt for the key: standard output is not a terminal.', {
      hint: 'Pipe the key instead, e.g. `printf %s "$KEY" | crm keys add …`.',
    });
  }
  const text = await readAll(ctx.io.stdin, MAX_KEY_INPUT, ctx.signal);
  const key = trimOneNewline(text);
  if (key === '') {
    throw new UsageError('No key on standard input.', {
      hint: 'Pipe the key, e.g. `printf %s "$KEY" | crm keys add …`, or run in a terminal to be prompted.',
    });
  }
  return key;
}

/** `echo KEY |` adds one newline (`\n` or `\r\n`); take exactly that off, nothing else. */
export function trimOneNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  if (text.endsWith('\n')) return text.slice(0, -1);
  return text;
}

async function readAll(stream: NodeJS.ReadableStream, max: number, signal?: AbortSignal): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    if (signal?.aborted) throw new InterruptedError('Interrupted.');
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buf.length;
    if (size > max) throw new UsageError(`Standard input is too large for a key (over ${max} bytes).`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Asks on `output` and reads one line from `input` without echoing it: readline drives the
 * terminal (raw mode, line editing) but writes its echo to a muted stream.
 */
export function promptHidden(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  question: string,
  signal?: AbortSignal,
): Promise<string> {
  const muted = new Writable({
    write(_chunk, _encoding, callback) {
      callback();
    },
  });
  const rl = createInterface({ input, output: muted, terminal: true, historySize: 0 });
  output.write(question);
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      output.write('\n');
      rl.close();
      fn();
    };
    const onAbort = (): void => finish(() => reject(new InterruptedError('Interrupted.')));
    rl.on('line', (line) => finish(() => resolve(line.trim())));
    rl.on('SIGINT', () => finish(() => reject(new InterruptedError('Interrupted.'))));
    rl.on('close', () => finish(() => reject(new UsageError('No key entered.'))));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}
