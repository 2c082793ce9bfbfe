// `crm recordings transcript|download` beside the generic list/get (CONTRACT §8).
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { examples, runs, type FlagsOf, type Load, type Loose, type Registry } from '../shared/define.js';
import { numericOption } from '../shared/numeric.js';

const declareTranscript = (recordings: CommandUnknownOpts) =>
  examples(recordings.command('transcript'), [
    'crm recordings transcript rec_123 | jq .segments[0]',
    'crm recordings transcript rec_123 --out rec_123.json',
  ])
    .description("print one recording's transcript (or write it to --out)")
    .argument('<id>', 'recording id')
    .option('--out <file>', 'write the transcript JSON to this file (atomically)');
const declareDownload = (recordings: CommandUnknownOpts) =>
  examples(recordings.command('download'), [
    'crm recordings download',
    'crm recordings download --dir board-meeting --since 2026-10-01',
  ])
    .description('download every transcript to DIR/<id>.json; a rerun resumes')
    .option('--dir <dir>', 'where to write', 'transcripts')
    .addOption(numericOption('--concurrency <n>', 'downloads in flight', 'downloadConcurrency').default(4))
    .option('--overwrite', 'download again even when the file exists')
    .option('--since <date>', 'only recordings started at or after this date (ISO 8601)');

export type TranscriptOptions = FlagsOf<typeof declareTranscript> & { id: string };
/** download.ts applies the same defaults and checks the same range. */
export type DownloadOptions = Loose<FlagsOf<typeof declareDownload>>;

/** Adds the two verbs to the recordings group that registerResources made. */
export function registerRecordings(
  program: CommandUnknownOpts,
  reg: Registry,
  load: { transcript: Load<TranscriptOptions>; download: Load<DownloadOptions> },
): void {
  const recordings = program.commands.find((c) => c.name() === 'recordings');
  if (!recordings) throw new Error('the recordings group must be registered first');
  runs(declareTranscript(recordings), reg, load.transcript, (o, id) => ({ ...o, id }));
  runs(declareDownload(recordings), reg, load.download, (o) => o);
}
