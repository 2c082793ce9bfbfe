// The batch import engine behind `crm batch` (CONTRACT §7).
export { runImport, importExitCode, importSummaryOf } from './engine.js';
export type { ImportOptions, ImportDeps, ImportSummary, ImportPlan, ImportProgress } from './engine.js';
export type { BeforeSend, MatchPlan, MatchIndex, MatchRead } from './types.js';
export { httpSender } from './send/sender.js';
export { keepBefore, openBackup, type DeleteBackup } from './files/backup.js';
export { backupRead } from './files/backup.js';
export {
  dropResults,
  recreated,
  restoreResults,
  writeOwners,
  type RestoreResults,
  type RestoreRun,
} from './files/owners.js';
export { deleteCostText, listIntoBackup, readCostText, readHow } from './send/backup-read.js';
export {
  choiceOf,
  deleteOperation,
  linkOperation,
  parentField,
  updateOperation,
  type RowOperation,
} from './operation.js';
export type { BatchSender, BatchRequest, BatchResponse } from './send/sender.js';
export { keyIdentity } from './journal/journal.js';
export { matchReader } from './match/read.js';
export { normalizeFieldName } from './input/header.js';
export { OTHER_REASONS, type Reason } from './send/reasons.js';
