// Writing with backpressure: when write() returns false, wait for 'drain', so memory stays flat
// however slow the reader is.

export type OutputStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** The reader went away (`crm … | head`): stop producing output. */
class OutputClosedError extends Error {
  readonly code = 'EPIPE';
  constructor() {
    super('standard output was closed');
    this.name = 'OutputClosedError';
  }
}

/** True for errors that mean "the reader of our output went away", which the CLI treats as a quiet stop. */
export function isBrokenPipe(err: unknown): boolean {
  if (err instanceof OutputClosedError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || code === 'ERR_STREAM_WRITE_AFTER_END';
}

/** Resolves on 'drain'; rejects when the stream errors or closes first. */
export function waitForDrain(stream: OutputStream): Promise<void> {
  if ((stream as { destroyed?: boolean }).destroyed) return Promise.reject(new OutputClosedError());
  return new Promise<void>((resolve, reject) => {
    const handlers: Record<string, (err?: unknown) => void> = {
      drain: () => settle(),
      error: (err) => settle(err instanceof Error ? err : new Error(String(err))),
      close: () => settle(new OutputClosedError()),
    };
    const settle = (err?: Error): void => {
      for (const [event, fn] of Object.entries(handlers)) stream.removeListener(event, fn);
      if (err) reject(err);
      else resolve();
    };
    for (const [event, fn] of Object.entries(handlers)) stream.on(event, fn);
  });
}

/** Writes `chunk` now (output order follows call order even unawaited); a promise only when the stream asks to wait. */
export function writeChunk(stream: OutputStream, chunk: string): Promise<void> | undefined {
  if (chunk === '') return undefined;
  return stream.write(chunk) ? undefined : waitForDrain(stream);
}
