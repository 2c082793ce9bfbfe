// `crm api METHOD PATH` (CONTRACT §10).
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { collect, DRY_RUN, examples, runs, type FlagsOf, type Load, type Registry } from '../shared/define.js';

const declare = (program: CommandUnknownOpts) =>
  program
    .command('api')
    .description('send any request relative to the base URL and print the whole response envelope')
    .argument('<method>', 'GET, POST, PUT, PATCH or DELETE')
    .argument('<path>', 'e.g. /contacts?limit=5')
    .option('--data <json>', "the body: JSON, @file.json or '-'")
    .option('--set <field=value>', 'a body field; field:=json for other types (repeatable)', collect)
    .option('--paginate', 'GET only: follow every page and print the concatenated data')
    .option('--v1', 'relative to the version 1 base URL, with the v1 key')
    .option('--idempotency-key <key>', 'send this Idempotency-Key (POST/PATCH get a random one otherwise)')
    .option(...DRY_RUN);

export type ApiOptions = FlagsOf<typeof declare> & { method: string; path: string };

export function registerApi(program: CommandUnknownOpts, reg: Registry, load: Load<ApiOptions>): void {
  const api = declare(program);
  examples(api, [
    'crm api GET /contacts?limit=2',
    'crm api GET /deals --paginate',
    `crm api POST /people/query --v1 --data '{"limit":5}'`,
  ]);
  runs(api, reg, load, (o, method, path) => ({ ...o, method, path }));
}
