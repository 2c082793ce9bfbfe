// Options of `crm links …` (CONTRACT §6).

export interface LinkOptions {
  verb: 'list' | 'add' | 'remove' | 'get' | 'set' | 'clear';
  parent: string;
  id: string;
  relation: string;
  /** add/remove: the child; set: the deal or company id */
  childId?: string;
  type?: string;
  supervisor?: string;
  recordType?: string;
  data?: string;
  dryRun: boolean;
  limit?: number;
  cursor?: string;
  all: boolean;
  max?: number;
}
