// `__proto__` set by assignment would become the prototype and vanish from the body (a row's record, a `--set` body): setOwn closes that.

/** `obj[key] = value` that makes an own property even for `__proto__`, never a prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  // plain assignment for every other key: defineProperty per cell was a tenth of an import's CPU
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
