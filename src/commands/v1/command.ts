// `crm v1 …`: the three deprecated version 1 operations (CONTRACT §9).
import type { Command, CommandUnknownOpts } from '@commander-js/extra-typings';
import { collect, DRY_RUN, examples, paging, runs, type FlagsOf, type Load, type Registry } from '../shared/define.js';

const pageFlags = (cmd: Command, all: string) => paging(cmd, { cursor: 'start from this cursor', all });
const declareUpdate = (companies: CommandUnknownOpts) =>
  companies
    .command('update')
    .description('update a company (PATCH /companies/{companyId}); fields in camelCase')
    .argument('<companyId>', 'the company id')
    .option('--data <json>', "the body: JSON, @file.json or '-'")
    .option(
      '--set <field=value>',
      'a string field; field:=json for foundedYear, tags, altIndustries (repeatable)',
      collect,
    )
    .option('--idempotency-key <key>', 'send this Idempotency-Key')
    .option(...DRY_RUN);

type Kind = 'people' | 'interactions';
/** `filter`: the query's filter flags by field (`--company-id` → companyId) */
export type V1QueryOptions = FlagsOf<typeof pageFlags> & { kind: Kind; filter: Record<string, string | undefined> };
export type V1CompanyUpdateOptions = FlagsOf<typeof declareUpdate> & { companyId: string };

/** The two queries differ only in their filters (`--company-id <id>`: filter by company id, sets companyId). */
const QUERIES: Array<{ kind: Kind; description: string; filters: string[]; all: string; examples: string[] }> = [
  {
    kind: 'people',
    description: 'version 1 people (version 2: contacts)',
    filters: ['email <email>', 'phone <phone>', 'company-id <id>', 'owner <owner>'],
    all: 'follow nextCursor through every page',
    examples: ['crm v1 people query --email ada@example.com', 'crm v1 people query --all -o ndjson'],
  },
  {
    kind: 'interactions',
    description: 'version 1 interactions',
    filters: ['company-id <id>', 'contact-id <id>'],
    all: 'follow nextCursor when the server sends one',
    examples: ['crm v1 interactions query --company-id cmp_1'],
  },
];

export function registerV1(
  program: CommandUnknownOpts,
  reg: Registry,
  load: { query: Load<V1QueryOptions>; update: Load<V1CompanyUpdateOptions> },
): void {
  const v1 = program.command('v1').description('the deprecated version 1 API (people, interactions, company updates)');
  examples(v1, ['crm v1 people query --email ada@example.com', 'crm v1 companies update cmp_1 --set city=Paris']);
  for (const q of QUERIES) {
    const group = examples(v1.command(q.kind).description(q.description), q.examples.slice(0, 1));
    const cmd = group.command('query').description(`find ${q.kind} (POST /${q.kind}/query)`);
    for (const f of q.filters) cmd.option(`--${f}`, `filter by ${f.split(' ')[0]!.replace('-', ' ')}`);
    // the filters are the flags besides the page's own
    runs(examples(pageFlags(cmd, q.all), q.examples), reg, load.query, (o) => {
      const { limit, cursor, all, ...filter } = o;
      return { kind: q.kind, filter, limit, cursor, all };
    });
  }
  const companies = v1.command('companies').description('version 1 companies');
  examples(companies, ['crm v1 companies update cmp_1 --set foundedYear:=1998']);
  const update = examples(declareUpdate(companies), [
    'crm v1 companies update cmp_1 --set city=Paris --set foundedYear:=1998',
    `crm v1 companies update cmp_1 --set 'tags:=["saas","b2b"]'`,
  ]);
  runs(update, reg, load.update, (o, companyId) => ({ ...o, companyId }));
}
