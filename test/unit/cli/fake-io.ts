// Fake IO for running the CLI in-process: text collected from stdout and stderr.
import { PassThrough, Readable } from 'node:stream';
import type { IO } from '../../../src/commands/context.js';

export interface FakeIO {
  io: IO;
  out(): string;
  err(): string;
}

export function fakeIO(input = '', tty = false): FakeIO {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const stdin = Readable.from(input ? [input] : []) as IO['stdin'];
  if (tty) {
    Object.assign(stdout, { isTTY: true, columns: 120 });
    Object.assign(stdin, { isTTY: true });
  }
  return { io: { stdin, stdout, stderr }, out: () => out, err: () => err };
}
