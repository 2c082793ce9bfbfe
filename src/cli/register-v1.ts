// `crm v1 …`: the three deprecated version 1 operations (CONTRACT §9).
import { Option, type Command } from 'commander';
import type { V1CompanyUpdateOptions, V1QueryOptions } from '../commands/v1/types.js';
import { numeric, RANGES } from './numeric.js';
import { action, collect, examples, type Registry } from './program.js';

export function registerV1(program: Command, reg: Registry): void {
  const v1 = program.command('v1').description('the deprecated version 1 API (people, interactions, company updates)');
  examples(v1, ['crm v1 people query --email ada@example.com', 'crm v1 companies update cmp_1 --set city=Paris']);
  const query = async () => (await import('../commands/v1/query.js')).runV1Query;

  // The two queries differ only in their filters: one table, one loop.
  const queries: Array<{
    kind: V1QueryOptions['kind'];
    description: string;
    filters: Array<[flag: string, field: string, help: string]>;
    all: string;
    examples: string[];
  }> = [
    {
      kind: 'people',
      description: 'version 1 people (version 2: contacts)',
      filters: [
        ['--email <email>', 'email', 'filter by email'],
        ['--phone <phone>', 'phone', 'filter by phone'],
        ['--company-id <id>', 'companyId', 'filter by company id'],
        ['--owner <owner>', 'owner', 'filter by owner'],
      ],
      all: 'follow nextCursor through every page',
      examples: ['crm v1 people query --email ada@example.com', 'crm v1 people query --all -o ndjson'],
    },
    {
      kind: 'interactions',
      description: 'version 1 interactions',
      filters: [
        ['--company-id <id>', 'companyId', 'filter by company id'],
        ['--contact-id <id>', 'contactId', 'filter by contact id'],
      ],
      all: 'follow nextCursor when the server sends one',
      examples: ['crm v1 interactions query --company-id cmp_1'],
    },
  ];
  for (const q of queries) {
    const group = v1.command(q.kind).description(q.description);
    examples(group, q.examples.slice(0, 1));
    const cmd = group.command('query').description(`find ${q.kind} (POST /${q.kind}/query)`);
    for (const [flag, , help] of q.filters) cmd.option(flag, help);
    cmd
      .addOption(new Option('--limit <n>', 'page size, 1-100').argParser(numeric(RANGES.pageLimit)))
      .option('--cursor <cursor>', 'start from this cursor')
      .option('--all', q.all);
    examples(cmd, q.examples);
    cmd.action(
      action<V1QueryOptions>(reg, query, (_a, o) => ({
        kind: q.kind,
        filter: Object.fromEntries(q.filters.map(([, field]) => [field, o[field] as string | undefined])),
        limit: o.limit as number | undefined,
        cursor: o.cursor as string | undefined,
        all: Boolean(o.all),
      })),
    );
  }

  const companies = v1.command('companies').description('version 1 companies');
  examples(companies, ['crm v1 companies update cmp_1 --set foundedYear:=1998']);
  const cu = companies
    .command('update')
    .description('update a company (PATCH /companies/{companyId}); fields in camelCase')
    .argument('<companyId>', 'the company id')
    .option('--data <json>', "the body: JSON, @file.json or '-'")
    .option('--set <field=value>', 'a string field; field:=json for foundedYear, tags, altIndustries (repeatable)', collect)
    .option('--idempotency-key <key>', 'send this Idempotency-Key')
    .option('--dry-run', 'print the request instead of sending it');
  examples(cu, [
    'crm v1 companies update cmp_1 --set city=Paris --set foundedYear:=1998',
    `crm v1 companies update cmp_1 --set 'tags:=["saas","b2b"]'`,
  ]);
  cu.action(
    action<V1CompanyUpdateOptions>(
      reg,
      async () => (await import('../commands/v1/companies-update.js')).runV1CompanyUpdate,
      ([id], o) => ({
        companyId: id!,
        data: o.data as string | undefined,
        set: (o.set as string[] | undefined) ?? [],
        idempotencyKey: o.idempotencyKey as string | undefined,
        dryRun: Boolean(o.dryRun),
      }),
    ),
  );
}
