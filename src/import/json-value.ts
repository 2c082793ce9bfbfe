// Values typed from text (`amount:number` and `meta:json` cells, `--set field:=json`) reach the API
// as JSON built from JS values. A field named `__proto__` set by assignment would become the
// object's prototype and vanish from the body: setOwn closes that. (Numbers a double cannot hold:
// exactNumber and inexactJsonNumber in src/json/exact-json.ts.)

/** `obj[key] = value` that makes an own property even for `__proto__`, never a prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
