// `crm snapshot DIR [--resources a,b]` (issue 19): every collection to DIR, one NDJSON file each, resumable.
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { examples, runs, type FlagsOf, type Load, type Registry } from '../shared/define.js';

const declare = (program: CommandUnknownOpts) =>
  examples(program.command('snapshot'), [
    'crm snapshot backup',
    'crm snapshot backup --resources contacts,deals',
    'crm snapshot backup --resources contacts,companies,deals --links',
    'crm snapshot backup --transcripts',
  ])
    .description('write every collection to DIR/<resource>.ndjson and DIR/manifest.json; a rerun resumes')
    .argument('<dir>', 'folder to write (made if missing)')
    .option('--resources <list>', 'only these collections, comma-separated (default: every one that can be listed)')
    .option(
      '--links',
      "also each parent's links and a meeting's deal and company, to DIR/links/ (a request per parent and kind)",
    )
    .option('--transcripts', "also every recording's transcript, to DIR/transcripts/<id>.json (needs recordings)");

export type SnapshotOptions = FlagsOf<typeof declare> & {
  dir: string;
  /** the words after `crm`, for the command that resumes */
  argv?: readonly string[];
};

export function registerSnapshot(program: CommandUnknownOpts, reg: Registry, load: Load<SnapshotOptions>): void {
  runs(declare(program), reg, load, (o, dir) => ({ ...o, dir, argv: reg.state.argv }));
}
