// `crm batch RESOURCE FILE`: the bulk CSV/NDJSON import (CONTRACT §7).
import { Option, type Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { collect, examples, runs, type FlagsOf, type Load, type Registry } from '../shared/define.js';
import { numericOption } from '../shared/numeric.js';
import type { RowOperation } from '../../import/index.js';

/**
 * The flags of a run over a file, shared by `crm batch` and `crm links import|add --file` (each adds
 * its own --dry-run: `links add` has one for a single link already).
 */
export const batchFileFlags = <A extends unknown[]>(cmd: Command<A>) =>
  cmd
    .option('--map <column=field>', 'send a column as this field (repeatable)', collect)
    .addOption(numericOption('--concurrency <n>', 'requests in flight', 'batchConcurrency').default(4))
    .option('--rejects <file>', 'where invalid and failed rows go (default <input>.rejects.csv)')
    .option(
      '--results <file>',
      'write _line, id and the original columns of every row created (updated, deleted, linked)',
    )
    .option('--strict', 'send nothing if any row is invalid')
    .option('--no-resume', 'ignore the journal of an earlier run of the same file: a new run, every row sent again')
    .addOption(
      new Option(
        '--input-format <format>',
        'read the file as csv or ndjson (default: ndjson for a name ending in .ndjson or .jsonl, or a .json array; else csv, a .tsv as -o tsv writes it; standard input: csv)',
      ).choices(['csv', 'ndjson'] as const),
    )
    .option(
      '--encoding <name>',
      "the file's encoding when it has no byte order mark: utf-8 (default), utf-16le, utf-16be, windows-1252 (latin1), …",
    );

/** --dry-run of a run over a file. */
export const BATCH_DRY_RUN = ['--dry-run', 'check every row and print the plan; send nothing'] as const;

const declare = (program: CommandUnknownOpts) =>
  batchFileFlags(
    program
      .command('batch')
      .description('create, update or delete records in bulk from a CSV (or NDJSON) file: idempotent, resumable')
      .argument('<resource>', 'contacts, companies, deals, pipelines, tasks, notes, segments or interactions')
      .argument(
        '<file>',
        "a .csv, .ndjson or .jsonl file (or crm's own -o json / -o tsv as .json / .tsv), or '-' for standard input",
      ),
  )
    .option(...BATCH_DRY_RUN)
    .addOption(numericOption('--chunk-size <n>', 'rows per request, at most 100', 'chunkSize').default(100))
    .option('--update', 'update records instead: PATCH /RESOURCE/ID per row with its other cells')
    .option(
      '--delete',
      'delete records instead: DELETE /RESOURCE/ID per row (a CSV with an id column, or one id per line)',
    )
    .option('--id-column <name>', 'with --update or --delete: the column holding the record ids (default id)')
    .option(
      '--yes',
      'do not ask: a --delete (required without a terminal), or a --match plan of 100 writes or more on a terminal',
    )
    .option(
      '--backup <file>',
      'with --delete: where each record goes, as it was, before its DELETE (default <input>.deleted.ndjson)',
    )
    .option('--no-backup', 'with --delete: keep no copy of the records deleted')
    .option(
      '--match <fields>',
      'make the CRM agree with the file: match rows to records on these fields (email; name,domain), create what is missing, update what differs',
    )
    .option('--plan <file>', "with --match: write every row's action and changes (before → after) to this CSV");

export type BatchOptions = FlagsOf<typeof declare> & {
  resource: string;
  /** a path, or '-' for standard input */
  file: string;
  /** the words after `crm` as the user typed them: the command to resume with after Ctrl-C */
  argv?: readonly string[];
  /** set by `crm links import|add --file`: the links to make (--update/--delete are batch's own) */
  operation?: RowOperation;
};

/** What `crm batch --help` says after its examples. */
const BATCH_NOTES = `
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
Standard input and pipes are copied once (at most 1 GiB) before reading.`;

export function registerBatch(program: CommandUnknownOpts, reg: Registry, load: Load<BatchOptions>): void {
  const cmd = declare(program);
  examples(cmd, [
    'crm batch contacts people.csv',
    'crm batch contacts people.csv --map "E-mail=email" --results ids.csv',
    'crm batch deals deals.csv --dry-run',
    'cat people.ndjson | crm batch contacts - --input-format ndjson --strict',
    'crm batch contacts excel-export.csv --encoding windows-1252',
    'crm batch deals owners.csv --update            # columns: id,owner_id',
    'crm batch contacts test-ids.txt --delete       # one id per line',
    'crm batch contacts export.csv --delete --id-column "Record ID" --yes',
    'crm batch contacts test-ids.txt.deleted.ndjson  # re-create what was deleted',
    'crm batch contacts trade-show.csv --match email --dry-run',
    'crm batch contacts trade-show.csv --match email --plan plan.csv',
    'crm batch contacts trade-show.csv.undo.csv --match id  # undo --match',
    'crm batch deals deals.csv --match name  # columns: name,contacts.email',
  ]);
  cmd.addHelpText('after', BATCH_NOTES);
  runs(cmd, reg, load, (o, resource, file) => ({ ...o, resource, file, argv: reg.state.argv }));
}
