/** `fn`, called on the first call only: its value (a promise too) given to every later one. */
export function once<T>(fn: () => T): () => T {
  let done: { value: T } | undefined;
  return () => (done ??= { value: fn() }).value;
}
