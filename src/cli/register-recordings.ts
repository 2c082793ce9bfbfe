// `crm recordings transcript|download` beside the generic list/get (CONTRACT §8).
import { Option, type Command } from 'commander';
import type { TranscriptOptions } from '../commands/recordings/transcript.js';
import type { DownloadOptions } from '../commands/recordings/download.js';
import { numeric, RANGES } from './numeric.js';
import { action, examples, type Registry } from './program.js';

export function registerRecordings(program: Command, reg: Registry): void {
  const recordings = program.commands.find((c) => c.name() === 'recordings');
  if (!recordings) throw new Error('the recordings group must be registered first');

  const transcript = recordings
    .command('transcript')
    .description("print one recording's transcript (or write it to --out)")
    .argument('<id>', 'recording id')
    .option('--out <file>', 'write the transcript JSON to this file (atomically)');
  examples(transcript, ['crm recordings transcript rec_123 | jq .segments[0]', 'crm recordings transcript rec_123 --out rec_123.json']);
  transcript.action(
    action<TranscriptOptions>(
      reg,
      async () => (await import('../commands/recordings/transcript.js')).runTranscript,
      ([id], o) => ({ id: id!, out: o.out as string | undefined }),
    ),
  );

  const download = recordings
    .command('download')
    .description('download every transcript to DIR/<id>.json; a rerun resumes')
    .option('--dir <dir>', 'where to write', 'transcripts')
    .addOption(new Option('--concurrency <n>', 'downloads in flight').default(4).argParser(numeric(RANGES.downloadConcurrency)))
    .option('--overwrite', 'download again even when the file exists')
    .option('--since <date>', 'only recordings started at or after this date (ISO 8601)');
  examples(download, ['crm recordings download', 'crm recordings download --dir board-meeting --since 2026-10-01']);
  download.action(
    action<DownloadOptions>(
      reg,
      async () => (await import('../commands/recordings/download.js')).runDownload,
      (_a, o) => ({
        dir: o.dir as string,
        concurrency: o.concurrency as number,
        overwrite: Boolean(o.overwrite),
        since: o.since as string | undefined,
      }),
    ),
  );
}
