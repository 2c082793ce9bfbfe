// What the CLI context loads lazily: profile resolution, the store, credentials. conf and zod load
// only when openConfigStore runs.
export { resolveProfile } from './resolve.js';
export { openConfigStore } from './store.js';
export { credentialsFor } from './credentials.js';
