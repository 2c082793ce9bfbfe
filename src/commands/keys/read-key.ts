// How `keys add` gets a key: piped standard input, or a hidden prompt on a terminal. Never a flag
// (CONTRACT §2: it would leak into shell history and `ps`).
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { InterruptedError, UsageError } from '../../http/errors.js';
import type { Ctx } from '../context.js';
import { readStream } from '../shared/body.js';

/** More than any key; a file piped by mistake is refused rather than read whole. */
const MAX_KEY_INPUT = 16 * 1024;

export async function readKey(ctx: Ctx, prompt: string): Promise<string> {
  if (ctx.interactive()) {
    return promptHidden(ctx.io.stdin, ctx.io.stderr, prompt, ctx.signal);
  }
  if (ctx.io.stdin.isTTY) {
    throw new UsageError('Cannot prompt for the key: standard output is not a terminal.', {
      hint: 'Pipe the key instead, e.g. `printf %s "$KEY" | crm keys add …`.',
    });
  }
  const tooBig = `Standard input is too large for a key (over ${MAX_KEY_INPUT} bytes).`;
  // `echo KEY |` adds one newline (`\n` or `\r\n`): exactly that is taken off
  const key = (await readStream(ctx.io.stdin, { max: MAX_KEY_INPUT, tooBig, signal: ctx.signal })).replace(
    /\r?\n$/,
    '',
  );
  if (key === '') {
    throw new UsageError('No key on standard input.', {
      hint: 'Pipe the key, e.g. `printf %s "$KEY" | crm keys add …`, or run in a terminal to be prompted.',
    });
  }
  return key;
}

// Reads one line without echoing it: readline drives the terminal but echoes to a muted stream.
function promptHidden(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  question: string,
  signal?: AbortSignal,
): Promise<string> {
  const muted = new Writable({ write: (_chunk, _encoding, callback) => callback() });
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
