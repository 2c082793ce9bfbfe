// The output layer: how crm prints (formats, writers, sanitising, errors, progress).
export * from './backpressure.js';
export * from './csv.js';
export * from './errors.js';
export * from './format.js';
export * from './plural.js';
export * from './progress.js';
export * from './sanitize.js';
export * from './cell.js';
// table.js (cli-table3) is not re-exported, to keep it off the startup path: use loadTableRenderer().
export * from './writers.js';
