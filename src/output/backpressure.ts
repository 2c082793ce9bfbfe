// Writing to a stream while respecting backpressure: when write() returns false, wait for 'drain'
// before writing more, so a 100,000-record list keeps memory flat however slow the reader is.

export type OutputStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** The reader went away (`crm … | head`): stop producing output. */
export class OutputClosedError extends Error {
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
    const cleanup = (): void => {
      stream.removeListener('drain', onDrain);
      stream.removeListener('error', onError);
      stream.removeListener('close', onClose);
    };
    const onDrain = (): void => {
      cleanup();
      resolve();
    };
    const onError = (err: unknown): void => {
      cleanup();
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    const onClose = (): void => {
      cleanup();
      reject(new OutputClosedError());
    };
    stream.on('drain', onDrain);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/**
 * Writes `chunk` now (so output order always follows call order, even when the caller does not
 * await) and returns a promise only when the stream asked us to wait; undefined otherwise.
 */
export function writeChunk(stream: OutputStream, chunk: string): Promise<void> | undefined {
  if (chunk === '') return undefined;
  return stream.write(chunk) ? undefined : waitForDrain(stream);
}
