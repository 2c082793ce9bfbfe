// Option types of the generic resource verbs (CONTRACT §5), filled in by src/cli/register-resources.ts.

export interface ListOptions {
  resource: string;
  limit?: number;
  cursor?: string;
  all: boolean;
  max?: number;
  /** `key=value` query parameters */
  params: string[];
  /** recordings only: keep those whose transcript is ready */
  hasTranscript?: boolean;
}

export interface GetOptions {
  resource: string;
  id: string;
}

export interface WriteOptions {
  resource: string;
  verb: 'create' | 'update';
  id?: string;
  data?: string;
  set: string[];
  idempotencyKey?: string;
  dryRun: boolean;
}

export interface DeleteOptions {
  resource: string;
  id: string;
  yes: boolean;
  dryRun: boolean;
}
