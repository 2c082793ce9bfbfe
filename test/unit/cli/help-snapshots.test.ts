// What users read, as inline snapshots (as wrangler does): the --help of every command, one test
// per top-level group, so a change to help text shows in review. In-process at commander's default
// width of 80 (the fake stdout is not a terminal). The global options block repeats in every help:
// within a group it is printed once, later identical copies name the command that printed it.
import { describe, expect, it } from 'vitest';
import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { main } from '../../../src/cli/main.js';
import { allCommands, buildProgram, commandPath } from '../../../src/cli/program.js';
import { fakeIO } from '../../helpers/fake-io.js';

function program(): Command {
  return buildProgram({
    io: fakeIO().io,
    env: {},
    signal: new AbortController().signal,
    jsonErrors: false,
    verbose: false,
  });
}

async function help(words: string[]): Promise<string> {
  const f = fakeIO();
  const code = await main([...words, '--help'], { io: f.io, env: {}, handleSignals: false });
  expect(code).toBe(0);
  expect(f.err()).toBe('');
  return f.out();
}

/** `crm <group> --help` and the help of every command under it, each after a `$ crm … --help` line. */
async function groupHelp(group: string): Promise<string> {
  const root = program().commands.find((c) => c.name() === group);
  if (!root) throw new Error(`no command ${group}`);
  const seen = new Map<string, string>();
  const parts: string[] = [];
  for (const cmd of allCommands(root)) {
    const path = commandPath(cmd);
    let text = await help(path.split(' ').slice(1));
    const block = /^Global Options:\n(?: .*\n)*/m.exec(text)?.[0];
    if (block !== undefined) {
      const first = seen.get(block);
      if (first === undefined) seen.set(block, path);
      else text = text.replace(block, `Global Options: as in ${first} --help\n`);
    }
    parts.push(`$ ${path} --help\n${text}`);
  }
  return parts.join('\n');
}

const GROUPS = [
  'contacts',
  'companies',
  'deals',
  'pipelines',
  'tasks',
  'notes',
  'segments',
  'interactions',
  'meetings',
  'recordings',
  'bookings',
  'links',
  'batch',
  'snapshot',
  'restore',
  'api',
  'v1',
  'keys',
  'keys-check',
  'completion',
  'sandbox',
  '__complete',
];

describe('--help snapshots', () => {
  it('cover every top-level command', () => {
    expect(
      program()
        .commands.map((c) => c.name())
        .sort(),
    ).toEqual([...GROUPS].sort());
  });

  it('crm --help', async () => {
    expect(await help([])).toMatchInlineSnapshot(`
      "Usage: crm [options] [command]

      Operate the CRM service from the command line: records, links, bulk imports,
      transcripts.

      Options:
        -V, --version                      print the version
        --profile <name>                   use this saved profile (see crm keys list)
        --base-url <url>                   version 2 API root, ending in /api/v2
        --v1-base-url <url>                version 1 API root (default: --base-url
                                           with /api/v1)
        -o, --output <format>              output format (default: table on a
                                           terminal, json otherwise) (choices:
                                           "table", "json", "ndjson", "csv", "tsv")
        --fields <list>                    comma-separated fields to print, e.g.
                                           id,email,owner_id
        --wide                             tables: every column, uncut, even wider
                                           than the terminal
        --no-color                         no colors (also NO_COLOR)
        -q, --quiet                        no progress, notices or warnings
        -v, --verbose                      log each request on stderr (method, URL,
                                           status, ms, retries; keys masked)
        --timeout <seconds>                limit for each whole response, headers and
                                           body (default: 30)
        --max-retries <n>                  retries on 5xx and network errors (a 429
                                           with Retry-After waits within a 10-minute
                                           budget) (default: 5)
        -h, --help                         show help

      Records:
        contacts [verb]                    People you do business with (version 1:
                                           people)
        companies [verb]                   Organizations your contacts belong to
        deals [verb]                       Sales opportunities, linked to contacts and
                                           companies
        pipelines [verb]                   Sales pipelines and their stages
        tasks [verb]                       To-dos for you and your team
        notes [verb]                       Free-text notes, linked to contacts,
                                           companies or deals
        segments [verb]                    Lists of contacts
        interactions [verb]                Calls, emails and messages (no update, no
                                           delete)
        meetings [verb]                    Calendar meetings (read-only; can be
                                           associated with one deal and one company)
        recordings [verb]                  Call recordings and their transcripts
                                           (read-only)
        bookings [verb]                    Scheduling-page bookings (read-only)

      Links and bulk:
        links                              link records, one or a file of them:
                                           deals→contacts|companies, notes→records,
                                           segments→members; meetings→deal|company
        batch [options] <resource> <file>  create, update or delete records in bulk
                                           from a CSV (or NDJSON) file: idempotent,
                                           resumable
        snapshot [options] <dir>           write every collection to
                                           DIR/<resource>.ndjson and
                                           DIR/manifest.json; a rerun resumes
        restore [options] <dir>            put a snapshot's records into this
                                           profile's organization: each found (by the
                                           id map, its id or --match) or created; a
                                           rerun resumes
        api [options] <method> <path>      send any request relative to the base URL
                                           and print the whole response envelope

      Version 1 (deprecated):
        v1                                 the deprecated version 1 API (people,
                                           interactions, company updates)

      Setup:
        keys                               manage saved profiles and their API keys
        keys-check [options]               check that the active key authenticates and
                                           which read scopes it has (sends only reads)
        completion <shell>                 print a shell completion script
        sandbox [options]                  run a local emulator of the whole API
                                           (version 2 and 1) until interrupted
        help [command]                     display help for command

      Examples:
        $ crm sandbox --seed 42                    # a local API to try everything on
        $ crm keys add work --base-url https://crm.example.com/api/v2 < key.txt
        $ crm contacts list --all -o ndjson | jq .email
        $ crm batch contacts people.csv --rejects bad.csv
        $ crm recordings download --dir transcripts

      Exit codes: 0 ok, 2 usage, 3 auth, 4 forbidden, 5 not found, 6 validation,
      7 rate limited, 8 server/network, 9 partial failure, 130 interrupted.

      Environment: CRM_PROFILE, CRM_API_KEY, CRM_V1_API_KEY, CRM_BASE_URL,
      CRM_V1_BASE_URL, CRM_AUTH_HEADER, CRM_CONFIG_DIR; CRM_RATE_LIMIT_BUDGET (s a
      request may wait out 429s, default 600); HTTPS_PROXY, NO_PROXY; NO_COLOR.
      Responses over 64 MiB are refused (exit 8).
      "
    `);
  });

  it('contacts', async () => {
    expect(await groupHelp('contacts')).toMatchInlineSnapshot(`
      "$ crm contacts --help
      Usage: crm contacts [options] [command] [verb]

      People you do business with (version 1: people)

      Options:
        -h, --help             show help

      Commands:
        list                   list contacts (one page, or every page with --all)
        get                    show one contact, or several as a list
        create                 create a contact
        update                 change fields of a contact
        delete                 delete a contact, or several (asks first on a terminal)

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm contacts list
        $ crm contacts get con_123 -o json


      $ crm contacts list --help
      Usage: crm contacts list [options]

      list contacts (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm contacts --help

      Examples:
        $ crm contacts list --limit 50
        $ crm contacts list --all -o ndjson


      $ crm contacts get --help
      Usage: crm contacts get [options] <id...>

      show one contact, or several as a list

      Arguments:
        id                     contact id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm contacts --help

      Examples:
        $ crm contacts get con_123
        $ crm contacts get con_123 -o json | jq .
        $ crm contacts get - -o ndjson < ids.txt


      $ crm contacts create --help
      Usage: crm contacts create [options]

      create a contact

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm contacts create --set email=ada@example.com
        $ crm contacts create --data @contact.json


      $ crm contacts update --help
      Usage: crm contacts update [options] <id>

      change fields of a contact

      Arguments:
        id                       contact id

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options: as in crm contacts create --help

      Examples:
        $ crm contacts update con_123 --set email=ada.new@example.com
        $ echo '{"email":"ada.x@example.com"}' | crm contacts update con_123 --data -


      $ crm contacts delete --help
      Usage: crm contacts delete [options] <id...>

      delete a contact, or several (asks first on a terminal)

      Arguments:
        id                     contact id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -y, --yes              do not ask (required without a terminal)
        --backup <file>        where each contact goes, as it was, before its DELETE
                               (default contacts.deleted.<time>.ndjson, one per run)
        --no-backup            keep no copy of the contacts deleted
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm contacts --help

      Examples:
        $ crm contacts delete con_123
        $ crm contacts delete con_123 con_456 --yes
        $ crm contacts delete - --yes < ids.txt
        $ crm contacts delete con_123 --yes --backup kept.ndjson

      "
    `);
  });
  it('companies', async () => {
    expect(await groupHelp('companies')).toMatchInlineSnapshot(`
      "$ crm companies --help
      Usage: crm companies [options] [command] [verb]

      Organizations your contacts belong to

      Options:
        -h, --help             show help

      Commands:
        list                   list companies (one page, or every page with --all)
        get                    show one company, or several as a list
        create                 create a company
        update                 change fields of a company
        delete                 delete a company, or several (asks first on a terminal)

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm companies list
        $ crm companies get cmp_123 -o json


      $ crm companies list --help
      Usage: crm companies list [options]

      list companies (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm companies --help

      Examples:
        $ crm companies list --limit 50
        $ crm companies list --all -o ndjson


      $ crm companies get --help
      Usage: crm companies get [options] <id...>

      show one company, or several as a list

      Arguments:
        id                     company id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm companies --help

      Examples:
        $ crm companies get cmp_123
        $ crm companies get cmp_123 -o json | jq .
        $ crm companies get - -o ndjson < ids.txt


      $ crm companies create --help
      Usage: crm companies create [options]

      create a company

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm companies create --set name=Example
        $ crm companies create --data @company.json


      $ crm companies update --help
      Usage: crm companies update [options] <id>

      change fields of a company

      Arguments:
        id                       company id

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options: as in crm companies create --help

      Examples:
        $ crm companies update cmp_123 --set name=New
        $ echo '{"name":"x"}' | crm companies update cmp_123 --data -


      $ crm companies delete --help
      Usage: crm companies delete [options] <id...>

      delete a company, or several (asks first on a terminal)

      Arguments:
        id                     company id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -y, --yes              do not ask (required without a terminal)
        --backup <file>        where each company goes, as it was, before its DELETE
                               (default companies.deleted.<time>.ndjson, one per run)
        --no-backup            keep no copy of the companies deleted
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm companies --help

      Examples:
        $ crm companies delete cmp_123
        $ crm companies delete cmp_123 cmp_456 --yes
        $ crm companies delete - --yes < ids.txt
        $ crm companies delete cmp_123 --yes --backup kept.ndjson

      "
    `);
  });
  it('deals', async () => {
    expect(await groupHelp('deals')).toMatchInlineSnapshot(`
      "$ crm deals --help
      Usage: crm deals [options] [command] [verb]

      Sales opportunities, linked to contacts and companies

      Options:
        -h, --help             show help

      Commands:
        list                   list deals (one page, or every page with --all)
        get                    show one deal, or several as a list
        create                 create a deal
        update                 change fields of a deal
        delete                 delete a deal, or several (asks first on a terminal)

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm deals list
        $ crm deals get deal_123 -o json


      $ crm deals list --help
      Usage: crm deals list [options]

      list deals (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm deals --help

      Examples:
        $ crm deals list --limit 50
        $ crm deals list --all -o ndjson


      $ crm deals get --help
      Usage: crm deals get [options] <id...>

      show one deal, or several as a list

      Arguments:
        id                     deal id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm deals --help

      Examples:
        $ crm deals get deal_123
        $ crm deals get deal_123 -o json | jq .
        $ crm deals get - -o ndjson < ids.txt


      $ crm deals create --help
      Usage: crm deals create [options]

      create a deal

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm deals create --set name=Example
        $ crm deals create --data @deal.json


      $ crm deals update --help
      Usage: crm deals update [options] <id>

      change fields of a deal

      Arguments:
        id                       deal id

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options: as in crm deals create --help

      Examples:
        $ crm deals update deal_123 --set name=New
        $ echo '{"name":"x"}' | crm deals update deal_123 --data -


      $ crm deals delete --help
      Usage: crm deals delete [options] <id...>

      delete a deal, or several (asks first on a terminal)

      Arguments:
        id                     deal id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -y, --yes              do not ask (required without a terminal)
        --backup <file>        where each deal goes, as it was, before its DELETE
                               (default deals.deleted.<time>.ndjson, one per run)
        --no-backup            keep no copy of the deals deleted
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm deals --help

      Examples:
        $ crm deals delete deal_123
        $ crm deals delete deal_123 deal_456 --yes
        $ crm deals delete - --yes < ids.txt
        $ crm deals delete deal_123 --yes --backup kept.ndjson

      "
    `);
  });
  it('pipelines', async () => {
    expect(await groupHelp('pipelines')).toMatchInlineSnapshot(`
      "$ crm pipelines --help
      Usage: crm pipelines [options] [command] [verb]

      Sales pipelines and their stages

      Options:
        -h, --help             show help

      Commands:
        list                   list pipelines (one page, or every page with --all)
        get                    show one pipeline, or several as a list
        create                 create a pipeline
        update                 change fields of a pipeline
        delete                 delete a pipeline, or several (asks first on a
                               terminal)

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm pipelines list
        $ crm pipelines get pipe_123 -o json


      $ crm pipelines list --help
      Usage: crm pipelines list [options]

      list pipelines (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm pipelines --help

      Examples:
        $ crm pipelines list --limit 50
        $ crm pipelines list --all -o ndjson


      $ crm pipelines get --help
      Usage: crm pipelines get [options] <id...>

      show one pipeline, or several as a list

      Arguments:
        id                     pipeline id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm pipelines --help

      Examples:
        $ crm pipelines get pipe_123
        $ crm pipelines get pipe_123 -o json | jq .
        $ crm pipelines get - -o ndjson < ids.txt


      $ crm pipelines create --help
      Usage: crm pipelines create [options]

      create a pipeline

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm pipelines create --set name=Example
        $ crm pipelines create --data @pipeline.json


      $ crm pipelines update --help
      Usage: crm pipelines update [options] <id>

      change fields of a pipeline

      Arguments:
        id                       pipeline id

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options: as in crm pipelines create --help

      Examples:
        $ crm pipelines update pipe_123 --set name=New
        $ echo '{"name":"x"}' | crm pipelines update pipe_123 --data -


      $ crm pipelines delete --help
      Usage: crm pipelines delete [options] <id...>

      delete a pipeline, or several (asks first on a terminal)

      Arguments:
        id                     pipeline id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -y, --yes              do not ask (required without a terminal)
        --backup <file>        where each pipeline goes, as it was, before its DELETE
                               (default pipelines.deleted.<time>.ndjson, one per run)
        --no-backup            keep no copy of the pipelines deleted
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm pipelines --help

      Examples:
        $ crm pipelines delete pipe_123
        $ crm pipelines delete pipe_123 pipe_456 --yes
        $ crm pipelines delete - --yes < ids.txt
        $ crm pipelines delete pipe_123 --yes --backup kept.ndjson

      "
    `);
  });
  it('tasks', async () => {
    expect(await groupHelp('tasks')).toMatchInlineSnapshot(`
      "$ crm tasks --help
      Usage: crm tasks [options] [command] [verb]

      To-dos for you and your team

      Options:
        -h, --help             show help

      Commands:
        list                   list tasks (one page, or every page with --all)
        get                    show one task, or several as a list
        create                 create a task
        update                 change fields of a task
        delete                 delete a task, or several (asks first on a terminal)

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm tasks list
        $ crm tasks get task_123 -o json


      $ crm tasks list --help
      Usage: crm tasks list [options]

      list tasks (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm tasks --help

      Examples:
        $ crm tasks list --limit 50
        $ crm tasks list --all -o ndjson


      $ crm tasks get --help
      Usage: crm tasks get [options] <id...>

      show one task, or several as a list

      Arguments:
        id                     task id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm tasks --help

      Examples:
        $ crm tasks get task_123
        $ crm tasks get task_123 -o json | jq .
        $ crm tasks get - -o ndjson < ids.txt


      $ crm tasks create --help
      Usage: crm tasks create [options]

      create a task

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm tasks create --set title=Example
        $ crm tasks create --data @task.json


      $ crm tasks update --help
      Usage: crm tasks update [options] <id>

      change fields of a task

      Arguments:
        id                       task id

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options: as in crm tasks create --help

      Examples:
        $ crm tasks update task_123 --set title=New
        $ echo '{"title":"x"}' | crm tasks update task_123 --data -


      $ crm tasks delete --help
      Usage: crm tasks delete [options] <id...>

      delete a task, or several (asks first on a terminal)

      Arguments:
        id                     task id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -y, --yes              do not ask (required without a terminal)
        --backup <file>        where each task goes, as it was, before its DELETE
                               (default tasks.deleted.<time>.ndjson, one per run)
        --no-backup            keep no copy of the tasks deleted
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm tasks --help

      Examples:
        $ crm tasks delete task_123
        $ crm tasks delete task_123 task_456 --yes
        $ crm tasks delete - --yes < ids.txt
        $ crm tasks delete task_123 --yes --backup kept.ndjson

      "
    `);
  });
  it('notes', async () => {
    expect(await groupHelp('notes')).toMatchInlineSnapshot(`
      "$ crm notes --help
      Usage: crm notes [options] [command] [verb]

      Free-text notes, linked to contacts, companies or deals

      Options:
        -h, --help             show help

      Commands:
        list                   list notes (one page, or every page with --all)
        get                    show one note, or several as a list
        create                 create a note
        update                 change fields of a note
        delete                 delete a note, or several (asks first on a terminal)

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm notes list
        $ crm notes get note_123 -o json


      $ crm notes list --help
      Usage: crm notes list [options]

      list notes (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm notes --help

      Examples:
        $ crm notes list --limit 50
        $ crm notes list --all -o ndjson


      $ crm notes get --help
      Usage: crm notes get [options] <id...>

      show one note, or several as a list

      Arguments:
        id                     note id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm notes --help

      Examples:
        $ crm notes get note_123
        $ crm notes get note_123 -o json | jq .
        $ crm notes get - -o ndjson < ids.txt


      $ crm notes create --help
      Usage: crm notes create [options]

      create a note

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm notes create --set body=Example
        $ crm notes create --data @note.json


      $ crm notes update --help
      Usage: crm notes update [options] <id>

      change fields of a note

      Arguments:
        id                       note id

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options: as in crm notes create --help

      Examples:
        $ crm notes update note_123 --set body=New
        $ echo '{"body":"x"}' | crm notes update note_123 --data -


      $ crm notes delete --help
      Usage: crm notes delete [options] <id...>

      delete a note, or several (asks first on a terminal)

      Arguments:
        id                     note id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -y, --yes              do not ask (required without a terminal)
        --backup <file>        where each note goes, as it was, before its DELETE
                               (default notes.deleted.<time>.ndjson, one per run)
        --no-backup            keep no copy of the notes deleted
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm notes --help

      Examples:
        $ crm notes delete note_123
        $ crm notes delete note_123 note_456 --yes
        $ crm notes delete - --yes < ids.txt
        $ crm notes delete note_123 --yes --backup kept.ndjson

      "
    `);
  });
  it('segments', async () => {
    expect(await groupHelp('segments')).toMatchInlineSnapshot(`
      "$ crm segments --help
      Usage: crm segments [options] [command] [verb]

      Lists of contacts

      Options:
        -h, --help             show help

      Commands:
        list                   list segments (one page, or every page with --all)
        get                    show one segment, or several as a list
        create                 create a segment
        update                 change fields of a segment
        delete                 delete a segment, or several (asks first on a terminal)

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm segments list
        $ crm segments get seg_123 -o json


      $ crm segments list --help
      Usage: crm segments list [options]

      list segments (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm segments --help

      Examples:
        $ crm segments list --limit 50
        $ crm segments list --all -o ndjson


      $ crm segments get --help
      Usage: crm segments get [options] <id...>

      show one segment, or several as a list

      Arguments:
        id                     segment id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm segments --help

      Examples:
        $ crm segments get seg_123
        $ crm segments get seg_123 -o json | jq .
        $ crm segments get - -o ndjson < ids.txt


      $ crm segments create --help
      Usage: crm segments create [options]

      create a segment

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm segments create --set name=Example
        $ crm segments create --data @segment.json


      $ crm segments update --help
      Usage: crm segments update [options] <id>

      change fields of a segment

      Arguments:
        id                       segment id

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options: as in crm segments create --help

      Examples:
        $ crm segments update seg_123 --set name=New
        $ echo '{"name":"x"}' | crm segments update seg_123 --data -


      $ crm segments delete --help
      Usage: crm segments delete [options] <id...>

      delete a segment, or several (asks first on a terminal)

      Arguments:
        id                     segment id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -y, --yes              do not ask (required without a terminal)
        --backup <file>        where each segment goes, as it was, before its DELETE
                               (default segments.deleted.<time>.ndjson, one per run)
        --no-backup            keep no copy of the segments deleted
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm segments --help

      Examples:
        $ crm segments delete seg_123
        $ crm segments delete seg_123 seg_456 --yes
        $ crm segments delete - --yes < ids.txt
        $ crm segments delete seg_123 --yes --backup kept.ndjson

      "
    `);
  });
  it('interactions', async () => {
    expect(await groupHelp('interactions')).toMatchInlineSnapshot(`
      "$ crm interactions --help
      Usage: crm interactions [options] [command] [verb]

      Calls, emails and messages (no update, no delete)

      Options:
        -h, --help             show help

      Commands:
        list                   list interactions (one page, or every page with --all)
        get                    show one interaction, or several as a list
        create                 create a interaction

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm interactions list
        $ crm interactions get int_123 -o json


      $ crm interactions list --help
      Usage: crm interactions list [options]

      list interactions (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm interactions --help

      Examples:
        $ crm interactions list --limit 50
        $ crm interactions list --all -o ndjson


      $ crm interactions get --help
      Usage: crm interactions get [options] <id...>

      show one interaction, or several as a list

      Arguments:
        id                     interaction id; several, or '-' to read them from
                               standard input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm interactions --help

      Examples:
        $ crm interactions get int_123
        $ crm interactions get int_123 -o json | jq .
        $ crm interactions get - -o ndjson < ids.txt


      $ crm interactions create --help
      Usage: crm interactions create [options]

      create a interaction

      Options:
        --data <json>            the body: JSON, @file.json, or '-' for stdin
        --set <field=value>      set a string field; field:=json for numbers,
                                 booleans, arrays (repeatable)
        --idempotency-key <key>  send this Idempotency-Key (default: a random one,
                                 reused by retries)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm interactions create --set type=Example
        $ crm interactions create --data @interaction.json

      "
    `);
  });
  it('meetings', async () => {
    expect(await groupHelp('meetings')).toMatchInlineSnapshot(`
      "$ crm meetings --help
      Usage: crm meetings [options] [command] [verb]

      Calendar meetings (read-only; can be associated with one deal and one company)

      Options:
        -h, --help             show help

      Commands:
        list                   list meetings (one page, or every page with --all)
        get                    show one meeting, or several as a list

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm meetings list
        $ crm meetings get mtg_123 -o json


      $ crm meetings list --help
      Usage: crm meetings list [options]

      list meetings (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm meetings --help

      Examples:
        $ crm meetings list --limit 50
        $ crm meetings list --all -o ndjson


      $ crm meetings get --help
      Usage: crm meetings get [options] <id...>

      show one meeting, or several as a list

      Arguments:
        id                     meeting id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm meetings --help

      Examples:
        $ crm meetings get mtg_123
        $ crm meetings get mtg_123 -o json | jq .
        $ crm meetings get - -o ndjson < ids.txt

      "
    `);
  });
  it('recordings', async () => {
    expect(await groupHelp('recordings')).toMatchInlineSnapshot(`
      "$ crm recordings --help
      Usage: crm recordings [options] [command] [verb]

      Call recordings and their transcripts (read-only)

      Options:
        -h, --help             show help

      Commands:
        list                   list recordings (one page, or every page with --all)
        get                    show one recording, or several as a list
        transcript             print one recording's transcript (or write it to --out)
        download               download every transcript to DIR/<id>.json; a rerun
                               resumes

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm recordings list
        $ crm recordings get rec_123 -o json


      $ crm recordings list --help
      Usage: crm recordings list [options]

      list recordings (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        --has-transcript       only recordings whose transcript is ready
        -h, --help             show help

      Global Options: as in crm recordings --help

      Examples:
        $ crm recordings list --limit 50
        $ crm recordings list --all -o ndjson


      $ crm recordings get --help
      Usage: crm recordings get [options] <id...>

      show one recording, or several as a list

      Arguments:
        id                     recording id; several, or '-' to read them from
                               standard input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm recordings --help

      Examples:
        $ crm recordings get rec_123
        $ crm recordings get rec_123 -o json | jq .
        $ crm recordings get - -o ndjson < ids.txt


      $ crm recordings transcript --help
      Usage: crm recordings transcript [options] <id>

      print one recording's transcript (or write it to --out)

      Arguments:
        id                     recording id

      Options:
        --out <file>           write the transcript JSON to this file (atomically)
        -h, --help             show help

      Global Options: as in crm recordings --help

      Examples:
        $ crm recordings transcript rec_123 | jq .segments[0]
        $ crm recordings transcript rec_123 --out rec_123.json


      $ crm recordings download --help
      Usage: crm recordings download [options]

      download every transcript to DIR/<id>.json; a rerun resumes

      Options:
        --dir <dir>            where to write (default: "transcripts")
        --concurrency <n>      downloads in flight (default: 4)
        --overwrite            download again even when the file exists
        --since <date>         only recordings started at or after this date (ISO
                               8601)
        -h, --help             show help

      Global Options: as in crm recordings --help

      Examples:
        $ crm recordings download
        $ crm recordings download --dir board-meeting --since 2026-10-01

      "
    `);
  });
  it('bookings', async () => {
    expect(await groupHelp('bookings')).toMatchInlineSnapshot(`
      "$ crm bookings --help
      Usage: crm bookings [options] [command] [verb]

      Scheduling-page bookings (read-only)

      Options:
        -h, --help             show help

      Commands:
        list                   list bookings (one page, or every page with --all)
        get                    show one booking, or several as a list

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm bookings list
        $ crm bookings get bkg_123 -o json


      $ crm bookings list --help
      Usage: crm bookings list [options]

      list bookings (one page, or every page with --all)

      Options:
        --limit <n>            page size, 1-100 (server default 25)
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        --param <key=value>    another query parameter (repeatable)
        -h, --help             show help

      Global Options: as in crm bookings --help

      Examples:
        $ crm bookings list --limit 50
        $ crm bookings list --all -o ndjson


      $ crm bookings get --help
      Usage: crm bookings get [options] <id...>

      show one booking, or several as a list

      Arguments:
        id                     booking id; several, or '-' to read them from standard
                               input (one per line)

      Options:
        --concurrency <n>      requests in flight when there are several ids (default:
                               4)
        -h, --help             show help

      Global Options: as in crm bookings --help

      Examples:
        $ crm bookings get bkg_123
        $ crm bookings get bkg_123 -o json | jq .
        $ crm bookings get - -o ndjson < ids.txt

      "
    `);
  });
  it('links', async () => {
    expect(await groupHelp('links')).toMatchInlineSnapshot(`
      "$ crm links --help
      Usage: crm links [options] [command]

      link records, one or a file of them: deals→contacts|companies, notes→records,
      segments→members; meetings→deal|company

      Options:
        -h, --help             show help

      Commands:
        list                   list the records linked to a parent
        add                    link a record (linking twice is a no-op)
        remove                 unlink a record
        get                    show a meeting's deal or company (null when unset)
        set                    set a meeting's deal or company
        clear                  clear a meeting's deal or company
        import                 link records in bulk from a file of pairs: idempotent,
                               resumable
        help [command]         display help for command

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm links add deals deal_123 contacts con_456 --type CHAMPION
        $ crm links list deals deal_123 contacts
        $ crm links set meetings mtg_1 deal deal_123
        $ crm links import deals contacts pairs.csv


      $ crm links list --help
      Usage: crm links list [options] <parent> <id> <relation>

      list the records linked to a parent

      Arguments:
        parent                 deals, notes or segments
        id                     the parent id
        relation               contacts, companies, records or members

      Options:
        --limit <n>            page size, 1-100
        --cursor <cursor>      start from this page cursor
        --all                  follow every page
        --max <n>              stop after this many records
        -h, --help             show help

      Global Options: as in crm links --help

      Examples:
        $ crm links list deals deal_123 contacts
        $ crm links list segments seg_1 members --all -o ndjson


      $ crm links add --help
      Usage: crm links add [options] <parent> <id> <relation> [child-id]

      link a record (linking twice is a no-op)

      Arguments:
        parent                     deals, notes or segments
        id                         the parent id
        relation                   contacts, companies, records or members
        child-id                   the record to link (or --file for many)

      Options:
        --type <type>              deals contacts only: PRIMARY, DECISION_MAKER,
                                   CHAMPION, INFLUENCER, GATEKEEPER, BLOCKER,
                                   PROCUREMENT, END_USER, TECHNICAL_EVALUATOR,
                                   ECONOMIC_BUYER, EXECUTIVE_SPONSOR, COACH
        --supervisor <supervisor>  deals contacts only: passed through as given
        --record-type <type>       notes records only (default contact) (choices:
                                   "contact", "company", "deal")
        --data <json>              replace the assumed body: JSON, @file.json or '-'
        --dry-run                  print the request instead of sending it; with
                                   --file, check every row and print the plan
        --map <column=field>       send a column as this field (repeatable)
        --concurrency <n>          requests in flight (default: 4)
        --rejects <file>           where invalid and failed rows go (default
                                   <input>.rejects.csv)
        --results <file>           write _line, id and the original columns of every
                                   row created (updated, deleted, linked)
        --strict                   send nothing if any row is invalid
        --no-resume                ignore the journal of an earlier run of the same
                                   file: a new run, every row sent again
        --input-format <format>    read the file as csv or ndjson (default: ndjson for
                                   a name ending in .ndjson or .jsonl, or a .json
                                   array; else csv, a .tsv as -o tsv writes it;
                                   standard input: csv) (choices: "csv", "ndjson")
        --encoding <name>          the file's encoding when it has no byte order mark:
                                   utf-8 (default), utf-16le, utf-16be, windows-1252
                                   (latin1), …
        --file <file>              link every child in this file instead (a CSV with
                                   the child's column, or one id per line; '-' for
                                   standard input)
        -h, --help                 show help

      Global Options:
        --profile <name>           use this saved profile (see crm keys list)
        --base-url <url>           version 2 API root, ending in /api/v2
        --v1-base-url <url>        version 1 API root (default: --base-url with
                                   /api/v1)
        -o, --output <format>      output format (default: table on a terminal, json
                                   otherwise) (choices: "table", "json", "ndjson",
                                   "csv", "tsv")
        --fields <list>            comma-separated fields to print, e.g.
                                   id,email,owner_id
        --wide                     tables: every column, uncut, even wider than the
                                   terminal
        --no-color                 no colors (also NO_COLOR)
        -q, --quiet                no progress, notices or warnings
        -v, --verbose              log each request on stderr (method, URL, status,
                                   ms, retries; keys masked)
        --timeout <seconds>        limit for each whole response, headers and body
                                   (default: 30)
        --max-retries <n>          retries on 5xx and network errors (a 429 with
                                   Retry-After waits within a 10-minute budget)
                                   (default: 5)

      Examples:
        $ crm links add deals deal_123 contacts con_456 --type DECISION_MAKER
        $ crm links add notes note_1 records cmp_9 --record-type company
        # one contact id per line
        $ crm links add segments seg_1 members --file ids.csv
        # columns: contact_id,type
        $ crm links add deals deal_123 contacts --file people.csv


      $ crm links remove --help
      Usage: crm links remove [options] <parent> <id> <relation> <child-id>

      unlink a record

      Arguments:
        parent                 deals, notes or segments
        id                     the parent id
        relation               contacts, companies, records or members
        child-id               the linked record

      Options:
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm links --help

      Examples:
        $ crm links remove deals deal_123 contacts con_456


      $ crm links get --help
      Usage: crm links get [options] <parent> <id> <relation>

      show a meeting's deal or company (null when unset)

      Arguments:
        parent                 meetings
        id                     the parent id
        relation               deal or company

      Options:
        -h, --help             show help

      Global Options: as in crm links --help

      Examples:
        $ crm links get meetings mtg_1 deal


      $ crm links set --help
      Usage: crm links set [options] <parent> <id> <relation> <target-id>

      set a meeting's deal or company

      Arguments:
        parent                 meetings
        id                     the parent id
        relation               deal or company
        target-id              the deal or company id

      Options:
        --data <json>          replace the assumed body: JSON, @file.json or '-'
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm links --help

      Examples:
        $ crm links set meetings mtg_1 deal deal_123


      $ crm links clear --help
      Usage: crm links clear [options] <parent> <id> <relation>

      clear a meeting's deal or company

      Arguments:
        parent                 meetings
        id                     the parent id
        relation               deal or company

      Options:
        --dry-run              print the request instead of sending it
        -h, --help             show help

      Global Options: as in crm links --help

      Examples:
        $ crm links clear meetings mtg_1 company


      $ crm links import --help
      Usage: crm links import [options] <parent> <relation> <file>

      link records in bulk from a file of pairs: idempotent, resumable

      Arguments:
        parent                   deals, notes, segments or meetings
        relation                 contacts, companies, records or members; meetings:
                                 deal or company
        file                     a .csv, .ndjson or .jsonl file, or '-' for standard
                                 input

      Options:
        --map <column=field>     send a column as this field (repeatable)
        --concurrency <n>        requests in flight (default: 4)
        --rejects <file>         where invalid and failed rows go (default
                                 <input>.rejects.csv)
        --results <file>         write _line, id and the original columns of every row
                                 created (updated, deleted, linked)
        --strict                 send nothing if any row is invalid
        --no-resume              ignore the journal of an earlier run of the same
                                 file: a new run, every row sent again
        --input-format <format>  read the file as csv or ndjson (default: ndjson for a
                                 name ending in .ndjson or .jsonl, or a .json array;
                                 else csv, a .tsv as -o tsv writes it; standard input:
                                 csv) (choices: "csv", "ndjson")
        --encoding <name>        the file's encoding when it has no byte order mark:
                                 utf-8 (default), utf-16le, utf-16be, windows-1252
                                 (latin1), …
        --dry-run                check every row and print the plan; send nothing
        --plan <file>            by natural key: write every row's action and the ids
                                 it found to this CSV
        --remove                 unlink the file's pairs instead (a linked file crm
                                 wrote, or pairs by id or natural key)
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm links import deals contacts pairs.csv
        # columns: deal.name,contact.email
        $ crm links import deals contacts deals.csv
        $ crm links import deals contacts deals.csv.linked.csv --remove
        $ crm links import deals companies pairs.csv
        $ crm links import notes records pairs.csv
        $ crm links import segments members pairs.csv
        $ crm links import meetings deal pairs.csv


      Columns: each side by its id (deal_id, note_id, segment_id or meeting_id; the
      child's contact_id, company_id, record_id or deal_id) or by fields of its
      records (deal.name, contact.email, company.domain; several columns of one side
      are one key; notes' records: record.FIELD with record_type). deals contacts
      may add type and supervisor, notes records record_type (default contact). Any
      other column is refused (--map "COLUMN=" leaves one out).

      By fields, crm reads each side's records and each parent's links once, plans
      every row, and sends only what is missing: a pair already linked needs no
      request; a key two records share is ambiguous (<input>.ambiguous.csv); a key no
      record has is not found (rejects file: fix the rows there and import it).
      Keys are compared trimmed, emails and domains in any case. --dry-run prints
      the plan, --plan FILE every row's action. The links made go to
      <input>.linked.csv, written before each request: --remove with that file takes
      away exactly those (a pair not linked is left as it is).

      By ids, as with crm batch: every row is checked before the first request, a
      journal makes a rerun send nothing already done, and invalid or refused rows
      go to the rejects file (_line, _error_code, _error_message) to fix and feed
      back with the same command. --results, --strict and --no-resume are for this
      way only (not with --remove or --plan).

      One parent and a file of children: crm links add PARENT ID RELATION --file FILE.
      "
    `);
  });
  it('batch', async () => {
    expect(await groupHelp('batch')).toMatchInlineSnapshot(`
      "$ crm batch --help
      Usage: crm batch [options] <resource> <file>

      create, update or delete records in bulk from a CSV (or NDJSON) file:
      idempotent, resumable

      Arguments:
        resource                 contacts, companies, deals, pipelines, tasks, notes,
                                 segments or interactions
        file                     a .csv, .ndjson or .jsonl file (or crm's own -o json
                                 / -o tsv as .json / .tsv), or '-' for standard input

      Options:
        --map <column=field>     send a column as this field (repeatable)
        --concurrency <n>        requests in flight (default: 4)
        --rejects <file>         where invalid and failed rows go (default
                                 <input>.rejects.csv)
        --results <file>         write _line, id and the original columns of every row
                                 created (updated, deleted, linked)
        --strict                 send nothing if any row is invalid
        --no-resume              ignore the journal of an earlier run of the same
                                 file: a new run, every row sent again
        --input-format <format>  read the file as csv or ndjson (default: ndjson for a
                                 name ending in .ndjson or .jsonl, or a .json array;
                                 else csv, a .tsv as -o tsv writes it; standard input:
                                 csv) (choices: "csv", "ndjson")
        --encoding <name>        the file's encoding when it has no byte order mark:
                                 utf-8 (default), utf-16le, utf-16be, windows-1252
                                 (latin1), …
        --dry-run                check every row and print the plan; send nothing
        --chunk-size <n>         rows per request, at most 100 (default: 100)
        --update                 update records instead: PATCH /RESOURCE/ID per row
                                 with its other cells
        --delete                 delete records instead: DELETE /RESOURCE/ID per row
                                 (a CSV with an id column, or one id per line)
        --id-column <name>       with --update or --delete: the column holding the
                                 record ids (default id)
        --yes                    do not ask: a --delete (required without a terminal),
                                 or a --match plan of 100 writes or more on a terminal
        --backup <file>          with --delete: where each record goes, as it was,
                                 before its DELETE (default <input>.deleted.ndjson)
        --no-backup              with --delete: keep no copy of the records deleted
        --match <fields>         make the CRM agree with the file: match rows to
                                 records on these fields (email; name,domain), create
                                 what is missing, update what differs
        --plan <file>            with --match: write every row's action and changes
                                 (before → after) to this CSV
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm batch contacts people.csv
        $ crm batch contacts people.csv --map "E-mail=email" --results ids.csv
        $ crm batch deals deals.csv --dry-run
        $ cat people.ndjson | crm batch contacts - --input-format ndjson --strict
        $ crm batch contacts excel-export.csv --encoding windows-1252
        $ crm batch deals owners.csv --update            # columns: id,owner_id
        $ crm batch contacts test-ids.txt --delete       # one id per line
        $ crm batch contacts export.csv --delete --id-column "Record ID" --yes
        $ crm batch contacts test-ids.txt.deleted.ndjson  # re-create what was deleted
        $ crm batch contacts trade-show.csv --match email --dry-run
        $ crm batch contacts trade-show.csv --match email --plan plan.csv
        $ crm batch contacts trade-show.csv.undo.csv --match id  # undo --match
        $ crm batch deals deals.csv --match name  # columns: name,contacts.email


      Headers become fields ("First Name" → first_name); a header may carry a
      type: amount:number, active:boolean, tags:list (split on ;), meta:json. Empty
      cells are left out, and so are id, created_at, updated_at and owner_id when
      creating (the server sets them); an update sends owner_id. An untyped cell
      written as JSON writes a value (37, false, {...}, [...]) is sent as that value
      when the records hold its field as that kind, else as text (00501 stays text;
      type the header, score:number, to say; --match reads each cell as the type its
      own record holds). To clear a field in an update, type its column json and
      write null (title:json with null).

      Before sending, the columns are checked against the fields of one page of
      records (GET /RESOURCE?limit=100): a column whose field no record has, near
      one that does, is refused (exit 2), e.g. E-mail Address: did you mean email?
      use --map "E-mail Address=email". A column near no field is sent as a new
      field, with a warning; a column given by --map is never refused, and
      --map "Company=" leaves the column Company out. --dry-run shows how each
      column maps. The first chunk goes alone: if its rows all fail with one same
      error (nothing created yet), the run stops there (exit 9).

      Rerunning the same command skips the chunks already done and sends again
      the rows the server rejected; the rejects file holds only rows never
      created: fix it and import it as the hint says. --map, --id-column and
      --chunk-size are part of the job: another mapping of rows already created is
      refused. One run of a job at a time: a second is refused (exit 2). A row the
      same as an earlier one is skipped and named (line 7 repeats line 3). The
      summary says why rows failed and ends with one sentence of what happened.

      --update and --delete send one request per row (paced by the rate limit),
      each with the same guarantees: every row checked first, a journal so a rerun
      sends nothing already done, rejects with _line, _error_code, _error_message.
      Idempotency-Keys belong to one run (kept in the journal): a resumed run
      replays instead of applying twice; a later run applies the change again.
      Rows for one record are applied in file order. A delete answered 404 after a
      retry, or for a row an earlier run sent, counts as deleted.

      A delete first reads each record and appends it, as it was, to
      <input>.deleted.ndjson (or --backup FILE), flushed to disk, before its
      DELETE is sent; a record already gone is not written. Fewer than 100 ids are
      read with a GET each; more, by listing the collection (100 a request) while
      its pages find at least one of the file's ids per page read, then a GET for
      each id not found. The question (or with --yes a notice) says what the
      whole delete costs (reads and a DELETE per row left), in requests and
      minutes at the rate limit, and that links to and from the records are not
      kept. A rerun writes no record twice. A backup file that cannot be written
      stops the run before anything is deleted (exit 2); --no-backup keeps no
      copy. Importing the file ("crm batch contacts ids.txt.deleted.ndjson")
      creates the records again, with new ids (id, created_at, updated_at,
      owner_id are left out; --results FILE maps each line to its new id), and
      says which links did not come back. Any create whose rows carry owner_id
      (a backup under any name, an export) writes <input>.owners.csv (each new id
      and the owner its row had) for "crm batch contacts FILE.owners.csv --match
      id", which gives the records back their owners.

      --match FIELD[,FIELD] makes the CRM agree with the file: it reads what the
      CRM holds (listing the collection, 100 records a request), then per row:
      create (no record has the key), update (one record has it: a PATCH of only
      the fields that differ), unchanged (no request), ambiguous (two or more
      records have it: nothing sent, the row in <input>.ambiguous.csv), duplicate
      (rows share the key with other values: none of them sent, each rejected); a
      row the same as its key's first (the key in any case) is skipped. Emails
      match in any case; text is trimmed; an empty cell leaves a field as it is (a
      json column with null clears it). The plan is shown first on a terminal, and
      a plan of 100 writes or more asks before sending (--yes does not ask; nor
      does a script without a terminal); --dry-run stops there; --plan FILE writes
      every row's action and changes. Values an update changes go to
      <input>.undo.csv before it is sent, created ids to <input>.created.csv (a
      later run writes its own, <input>.undo.<time>.csv, and prints it): "crm batch
      contacts X.undo.csv --match id" puts the values back (right twice, or a week
      later), --delete of the created file removes what was added.
      A rerun reads the CRM again: it sends only what differs by then. After
      Ctrl-C or kill -9, the same command finishes the job: what the interrupted
      run did counts as done only where the CRM still agrees, and its creates
      left without an answer go again under the same keys (never made twice).

      Records and their links: with --match, columns that name linked records by
      their fields (contacts.email, companies.domain in a deals file; deals.name,
      segments.name in a contacts file; several in a cell separated by ;) link each
      row's record once it is created or matched, as "crm links import" does: each
      pair once, ambiguous or unknown keys never guessed, the links made written to
      <input>.contacts.linked.csv (one file per relation) to remove them with
      "crm links import deals contacts FILE --remove". Without --match such
      columns are refused (they would be sent as fields).

      Text is UTF-8 unless a byte order mark (UTF-8, UTF-16) or --encoding says
      otherwise; a file with bytes that do not decode is refused before anything is
      sent, naming the lines. A row with a NUL byte or over 1 MiB is an invalid row,
      never sent altered. Rejects files are UTF-8: import them without --encoding.
      Standard input and pipes are copied once (at most 1 GiB) before reading.
      "
    `);
  });
  it('snapshot', async () => {
    expect(await groupHelp('snapshot')).toMatchInlineSnapshot(`
      "$ crm snapshot --help
      Usage: crm snapshot [options] <dir>

      write every collection to DIR/<resource>.ndjson and DIR/manifest.json; a rerun
      resumes

      Arguments:
        dir                    folder to write (made if missing)

      Options:
        --resources <list>     only these collections, comma-separated (default: every
                               one that can be listed)
        --links                also each parent's links and a meeting's deal and
                               company, to DIR/links/ (a request per parent and kind)
        --transcripts          also every recording's transcript, to
                               DIR/transcripts/<id>.json (needs recordings)
        -h, --help             show help

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm snapshot backup
        $ crm snapshot backup --resources contacts,deals
        $ crm snapshot backup --resources contacts,companies,deals --links
        $ crm snapshot backup --transcripts

      "
    `);
  });

  it('api', async () => {
    expect(await groupHelp('api')).toMatchInlineSnapshot(`
      "$ crm api --help
      Usage: crm api [options] <method> <path>

      send any request relative to the base URL and print the whole response envelope

      Arguments:
        method                   GET, POST, PUT, PATCH or DELETE
        path                     e.g. /contacts?limit=5

      Options:
        --data <json>            the body: JSON, @file.json or '-'
        --set <field=value>      a body field; field:=json for other types
                                 (repeatable)
        --paginate               GET only: follow every page and print the
                                 concatenated data
        --v1                     relative to the version 1 base URL, with the v1 key
        --idempotency-key <key>  send this Idempotency-Key (POST/PATCH get a random
                                 one otherwise)
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm api GET /contacts?limit=2
        $ crm api GET /deals --paginate
        $ crm api POST /people/query --v1 --data '{"limit":5}'

      "
    `);
  });
  it('v1', async () => {
    expect(await groupHelp('v1')).toMatchInlineSnapshot(`
      "$ crm v1 --help
      Usage: crm v1 [options] [command]

      the deprecated version 1 API (people, interactions, company updates)

      Options:
        -h, --help             show help

      Commands:
        people                 version 1 people (version 2: contacts)
        interactions           version 1 interactions
        companies              version 1 companies
        help [command]         display help for command

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm v1 people query --email ada@example.com
        $ crm v1 companies update cmp_1 --set city=Paris


      $ crm v1 people --help
      Usage: crm v1 people [options] [command]

      version 1 people (version 2: contacts)

      Options:
        -h, --help             show help

      Commands:
        query                  find people (POST /people/query)
        help [command]         display help for command

      Global Options: as in crm v1 --help

      Examples:
        $ crm v1 people query --email ada@example.com


      $ crm v1 people query --help
      Usage: crm v1 people query [options]

      find people (POST /people/query)

      Options:
        --email <email>        filter by email
        --phone <phone>        filter by phone
        --company-id <id>      filter by company id
        --owner <owner>        filter by owner
        --limit <n>            page size, 1-100
        --cursor <cursor>      start from this cursor
        --all                  follow nextCursor through every page
        -h, --help             show help

      Global Options: as in crm v1 --help

      Examples:
        $ crm v1 people query --email ada@example.com
        $ crm v1 people query --all -o ndjson


      $ crm v1 interactions --help
      Usage: crm v1 interactions [options] [command]

      version 1 interactions

      Options:
        -h, --help             show help

      Commands:
        query                  find interactions (POST /interactions/query)
        help [command]         display help for command

      Global Options: as in crm v1 --help

      Examples:
        $ crm v1 interactions query --company-id cmp_1


      $ crm v1 interactions query --help
      Usage: crm v1 interactions query [options]

      find interactions (POST /interactions/query)

      Options:
        --company-id <id>      filter by company id
        --contact-id <id>      filter by contact id
        --limit <n>            page size, 1-100
        --cursor <cursor>      start from this cursor
        --all                  follow nextCursor when the server sends one
        -h, --help             show help

      Global Options: as in crm v1 --help

      Examples:
        $ crm v1 interactions query --company-id cmp_1


      $ crm v1 companies --help
      Usage: crm v1 companies [options] [command]

      version 1 companies

      Options:
        -h, --help             show help

      Commands:
        update                 update a company (PATCH /companies/{companyId}); fields
                               in camelCase
        help [command]         display help for command

      Global Options: as in crm v1 --help

      Examples:
        $ crm v1 companies update cmp_1 --set foundedYear:=1998


      $ crm v1 companies update --help
      Usage: crm v1 companies update [options] <companyId>

      update a company (PATCH /companies/{companyId}); fields in camelCase

      Arguments:
        companyId                the company id

      Options:
        --data <json>            the body: JSON, @file.json or '-'
        --set <field=value>      a string field; field:=json for foundedYear, tags,
                                 altIndustries (repeatable)
        --idempotency-key <key>  send this Idempotency-Key
        --dry-run                print the request instead of sending it
        -h, --help               show help

      Global Options:
        --profile <name>         use this saved profile (see crm keys list)
        --base-url <url>         version 2 API root, ending in /api/v2
        --v1-base-url <url>      version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>    output format (default: table on a terminal, json
                                 otherwise) (choices: "table", "json", "ndjson",
                                 "csv", "tsv")
        --fields <list>          comma-separated fields to print, e.g.
                                 id,email,owner_id
        --wide                   tables: every column, uncut, even wider than the
                                 terminal
        --no-color               no colors (also NO_COLOR)
        -q, --quiet              no progress, notices or warnings
        -v, --verbose            log each request on stderr (method, URL, status, ms,
                                 retries; keys masked)
        --timeout <seconds>      limit for each whole response, headers and body
                                 (default: 30)
        --max-retries <n>        retries on 5xx and network errors (a 429 with
                                 Retry-After waits within a 10-minute budget)
                                 (default: 5)

      Examples:
        $ crm v1 companies update cmp_1 --set city=Paris --set foundedYear:=1998
        $ crm v1 companies update cmp_1 --set 'tags:=["saas","b2b"]'

      "
    `);
  });
  it('keys', async () => {
    expect(await groupHelp('keys')).toMatchInlineSnapshot(`
      "$ crm keys --help
      Usage: crm keys [options] [command]

      manage saved profiles and their API keys

      Options:
        -h, --help             show help

      Commands:
        add                    save a key (read from stdin or a hidden prompt) under a
                               profile
        list                   show profiles, base URLs and masked keys
        use                    make a profile the default
        remove                 delete a profile and its keys
        help [command]         display help for command

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm keys add work --base-url https://crm.example.com/api/v2
        $ crm keys list
        $ crm keys use work


      $ crm keys add --help
      Usage: crm keys add [options] <profile>

      save a key (read from stdin or a hidden prompt) under a profile

      Arguments:
        profile                profile name

      Options:
        --base-url <url>       version 2 API root, ending in /api/v2 (required for a
                               new profile)
        --v1-base-url <url>    version 1 API root (default: base URL with /api/v1)
        --auth-header <kind>   how the key is sent (choices: "x-api-key", "bearer")
        --v1                   the key is a version 1 key (service_pk_…)
        --default              make this the default profile
        -h, --help             show help

      Global Options: as in crm keys --help

      Examples:
        $ crm keys add work --base-url https://crm.example.com/api/v2
        $ pbpaste | crm keys add work --base-url https://crm.example.com/api/v2


      $ crm keys list --help
      Usage: crm keys list [options]

      show profiles, base URLs and masked keys

      Options:
        -h, --help             show help

      Global Options: as in crm keys --help

      Examples:
        $ crm keys list
        $ crm keys list -o json


      $ crm keys use --help
      Usage: crm keys use [options] <profile>

      make a profile the default

      Options:
        -h, --help             show help

      Global Options: as in crm keys --help

      Examples:
        $ crm keys use work


      $ crm keys remove --help
      Usage: crm keys remove [options] <profile>

      delete a profile and its keys

      Options:
        -h, --help             show help

      Global Options: as in crm keys --help

      Examples:
        $ crm keys remove old-sandbox

      "
    `);
  });
  it('keys-check', async () => {
    expect(await groupHelp('keys-check')).toMatchInlineSnapshot(`
      "$ crm keys-check --help
      Usage: crm keys-check [options]

      check that the active key authenticates and which read scopes it has (sends only
      reads)

      Options:
        --v1                   check the profile's version 1 key against version 1
        -h, --help             show help

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm keys-check
        $ crm keys-check --profile work -o json
        $ crm keys-check --v1

      "
    `);
  });
  it('completion', async () => {
    expect(await groupHelp('completion')).toMatchInlineSnapshot(`
      "$ crm completion --help
      Usage: crm completion [options] <shell>

      print a shell completion script

      Arguments:
        shell                  bash, zsh or fish

      Options:
        -h, --help             show help

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ source <(crm completion bash)       # in ~/.bashrc
        $ crm completion zsh > ~/.zfunc/_crm   # fpath=(~/.zfunc $fpath) in ~/.zshrc
        $ crm completion fish > ~/.config/fish/completions/crm.fish

      "
    `);
  });
  it('sandbox', async () => {
    expect(await groupHelp('sandbox')).toMatchInlineSnapshot(`
      "$ crm sandbox --help
      Usage: crm sandbox [options]

      run a local emulator of the whole API (version 2 and 1) until interrupted

      Options:
        --host <host>                  address to listen on (loopback only) (default:
                                       "127.0.0.1")
        --port <n>                     port (0 picks a free one) (default: 4010)
        --seed <n>                     fill deterministic sample data (and keys)
        --seed-records <counts>        resource=N,… sample records of these resources
                                       (the others as --seed; seed 0 without it)
        --data-file <file>             load the store from FILE and save it there on
                                       exit
        --from <dir>                   serve the records of a crm snapshot folder, ids
                                       kept (not with --seed, --seed-records,
                                       --data-file)
        --keys <file>                  more keys: a JSON array of {key, version,
                                       scopes, access, user}
        --rate-limit <n>               requests per window per key (default: 200)
        --org-rate-limit <n>           requests per window per organization (default:
                                       1000)
        --rate-window-ms <ms>          rate-limit window (default: 60000)
        --transcript-ttl-ms <ms>       lifetime of a transcript link (default: 300000)
        --download-rate-limit <n>      transcript downloads per download window
                                       (default: 20)
        --download-window-ms <ms>      transcript download window (default: 1000)
        --fail-rate <p>                probability of a 500 before a request runs
                                       (0-1)
        --latency-ms <ms>              delay every response
        --faults <spec>                kind:probability,… (500, 500-after-write, drop,
                                       drop-after-write, html-502, 429, truncated)
        --fault-paths <regex>          apply faults only to paths matching this
        --control                      serve the /__sandbox control endpoint (request
                                       log, faults, limits)
        --v1-interactions-cursor       send nextCursor from v1 interactions/query too
        --tls                          serve https with a certificate made at start;
                                       its CA file is "ca_file" in the start line
        --rate-limit-kind <kind>       fixed windows, or a sliding window (each
                                       request counts for a window after it; Reset:
                                       until the window is whole again, or with
                                       sliding-oldest until the oldest request leaves
                                       it) (choices: "fixed", "sliding",
                                       "sliding-oldest", default: "fixed")
        --rate-reset-format <format>   X-RateLimit-Reset as seconds until the reset
                                       (decimals, or whole rounded up), a Unix time,
                                       or no X-RateLimit-* headers (choices: "delta",
                                       "seconds", "epoch", "none", default: "delta")
        --retry-after-format <format>  Retry-After as delta-seconds or an HTTP-date
                                       (choices: "seconds", "date", default:
                                       "seconds")
        -h, --help                     show help

      Global Options:
        --profile <name>               use this saved profile (see crm keys list)
        --base-url <url>               version 2 API root, ending in /api/v2
        --v1-base-url <url>            version 1 API root (default: --base-url with
                                       /api/v1)
        -o, --output <format>          output format (default: table on a terminal,
                                       json otherwise) (choices: "table", "json",
                                       "ndjson", "csv", "tsv")
        --fields <list>                comma-separated fields to print, e.g.
                                       id,email,owner_id
        --wide                         tables: every column, uncut, even wider than
                                       the terminal
        --no-color                     no colors (also NO_COLOR)
        -q, --quiet                    no progress, notices or warnings
        -v, --verbose                  log each request on stderr (method, URL,
                                       status, ms, retries; keys masked)
        --timeout <seconds>            limit for each whole response, headers and body
                                       (default: 30)
        --max-retries <n>              retries on 5xx and network errors (a 429 with
                                       Retry-After waits within a 10-minute budget)
                                       (default: 5)

      Examples:
        $ crm sandbox --seed 42
        $ crm sandbox --port 0 --rate-limit 30 --rate-window-ms 3000 --control
        # a CRM of 100,000 people
        $ crm sandbox --port 0 --seed-records contacts=100000
        $ crm sandbox --tls   # then NODE_EXTRA_CA_CERTS=<ca_file> crm …
        # rehearse on the copy crm snapshot backup wrote
        $ crm sandbox --port 0 --from backup

      "
    `);
  });
  it('__complete', async () => {
    expect(await groupHelp('__complete')).toMatchInlineSnapshot(`
      "$ crm __complete --help
      Usage: crm __complete [options] <what>

      print words for the shell completion scripts

      Arguments:
        what                   profiles

      Options:
        -h, --help             show help

      Global Options:
        --profile <name>       use this saved profile (see crm keys list)
        --base-url <url>       version 2 API root, ending in /api/v2
        --v1-base-url <url>    version 1 API root (default: --base-url with /api/v1)
        -o, --output <format>  output format (default: table on a terminal, json
                               otherwise) (choices: "table", "json", "ndjson", "csv",
                               "tsv")
        --fields <list>        comma-separated fields to print, e.g. id,email,owner_id
        --wide                 tables: every column, uncut, even wider than the
                               terminal
        --no-color             no colors (also NO_COLOR)
        -q, --quiet            no progress, notices or warnings
        -v, --verbose          log each request on stderr (method, URL, status, ms,
                               retries; keys masked)
        --timeout <seconds>    limit for each whole response, headers and body
                               (default: 30)
        --max-retries <n>      retries on 5xx and network errors (a 429 with
                               Retry-After waits within a 10-minute budget) (default:
                               5)

      Examples:
        $ crm __complete profiles

      "
    `);
  });
});
