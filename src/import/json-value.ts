// `__proto__` set by assignment would become the prototype and vanish from the body: setOwn closes that.

/** `obj[key] = value` that makes an own property even for `__proto__`, never a prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
