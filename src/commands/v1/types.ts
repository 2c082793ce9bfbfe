// Options of `crm v1 …` (CONTRACT §9).

export interface V1QueryOptions {
  kind: 'people' | 'interactions';
  filter: Record<string, string | undefined>;
  limit?: number;
  cursor?: string;
  all: boolean;
}

export interface V1CompanyUpdateOptions {
  companyId: string;
  data?: string;
  set: string[];
  idempotencyKey?: string;
  dryRun: boolean;
}
