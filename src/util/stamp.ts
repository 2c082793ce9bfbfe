// A time in file names: `20261126T015612Z` (UTC, to the second), sortable and free of `:`.

/** `20261126T015612Z` for `ms` (UTC). */
export function fileStamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}
