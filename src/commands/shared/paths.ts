// API paths with every caller-supplied segment percent-encoded, so an id can never change the path.
import { UsageError } from '../../http/errors.js';

export function segment(value: string, what = 'id'): string {
  if (value === '' || value === '.' || value === '..') throw new UsageError(`invalid ${what} '${value}'`);
  return encodeURIComponent(value);
}

export function recordPath(resource: string, id: string): string {
  return `/${resource}/${segment(id)}`;
}
