// The `keys` command group and `keys-check`. src/cli/ loads this module only when one of them runs.
export { keysAdd } from './add.js';
export { keysList } from './list.js';
export { keysUse } from './use.js';
export { keysRemove } from './remove.js';
export { keysCheck } from './check.js';
export type { KeysCheckReport, RateLimitSeen } from './check.js';
export type { ProfileRow } from './list.js';
export type { KeysAddOptions, KeysCheckOptions, KeysProfileOptions } from './options.js';
export { readKey, promptHidden, trimOneNewline } from './read-key.js';
