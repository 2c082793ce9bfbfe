// Options of `crm batch` (CONTRACT §7).

export interface BatchOptions {
  resource: string;
  /** a path, or '-' for standard input */
  file: string;
  /** `column=field` overrides */
  map: string[];
  chunkSize: number;
  concurrency: number;
  rejects?: string;
  results?: string;
  dryRun: boolean;
  strict: boolean;
  resume: boolean;
  /** `--encoding`: the file's encoding when it has no byte order mark */
  encoding?: string;
  /** the words after `crm` as the user typed them: the command to resume with after Ctrl-C */
  argv?: readonly string[];
  /** `--input-format`: csv or ndjson, whatever the file's name (stdin: csv unless given) */
  inputFormat?: 'csv' | 'ndjson';
}
