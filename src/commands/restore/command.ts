// `crm restore DIR` (CONTRACT §10, issue 31): the records of a `crm snapshot DIR` folder put into the current
// profile's organization, each found by the id map, its id or its match fields, else created; resumable.
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { collect, examples, runs, type FlagsOf, type Load, type Registry } from '../shared/define.js';

const declare = (program: CommandUnknownOpts) =>
  examples(program.command('restore'), [
    'crm restore backup --dry-run',
    'crm restore backup --dry-run --plan restore-plan.csv',
    'crm restore backup',
    'crm restore backup --resources contacts,deals',
    'crm restore backup --match deals=name',
    'crm restore backup --links',
    'crm restore backup --owners users.csv',
  ])
    .description(
      "put a snapshot's records into this profile's organization: each found (by the id map, its id or --match) or created; a rerun resumes",
    )
    .argument('<dir>', 'a folder written by crm snapshot')
    .option(
      '--resources <list>',
      'only these collections, comma-separated (default: every one the snapshot holds that can be created)',
    )
    .option(
      '--match <res=fields>',
      'find the records of RES in the target by these fields, comma-separated (default: contacts=email, companies=domain); repeatable',
      collect,
    )
    .option(
      '--links',
      "also the links of DIR/links/ (crm snapshot --links) whose two records are restored, unless there; each parent's links read once",
    )
    .option(
      '--owners <file>',
      "CSV old_id,new_id: the owners of the records created, from the snapshot's users to this organization's (default: the same ids in the same organization)",
    )
    .option(
      '--plan <file>',
      "write every record's decision to FILE (CSV: resource,_line,_action,id,target_id,_candidates,_note) before anything is sent",
    )
    .option('--dry-run', 'read the snapshot and the target, print the plan, send nothing')
    .option(
      '--yes',
      'do not ask: creates of a collection without match fields into a target holding some of it (required without a terminal), or 100 creates or more on a terminal',
    );

export type RestoreOptions = FlagsOf<typeof declare> & { dir: string };

export function registerRestore(program: CommandUnknownOpts, reg: Registry, load: Load<RestoreOptions>): void {
  runs(declare(program), reg, load, (o, dir) => ({ ...o, dir }));
}
