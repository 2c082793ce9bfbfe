// Every top-level command group in help order: the words that invoke it, its heading in
// `crm --help` (grouped as gh does; default Setup), how it is built, and the module each of its
// commands loads when it runs (only here, so that nothing else decides what loads at start-up).
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { RESOURCE_NAMES } from '../api/resources.js';
import { registerApi } from '../commands/api/command.js';
import { registerBatch } from '../commands/batch/command.js';
import { registerKeys } from '../commands/keys/command.js';
import { registerLinks } from '../commands/links/command.js';
import { registerRecordings } from '../commands/recordings/command.js';
import { registerResources } from '../commands/resources/command.js';
import { registerSandbox } from '../commands/sandbox/command.js';
import type { Registry } from '../commands/shared/define.js';
import { registerV1 } from '../commands/v1/command.js';
import { registerCompletion } from './completion-command.js';

type Register = (program: CommandUnknownOpts, reg: Registry, want: (name: string) => boolean) => void;
const LINKS = 'Links and bulk:';

/** `completion` is in no group's words: it needs the whole tree. */
export const GROUPS: Array<{ names: readonly string[]; heading?: string; register: Register }> = [
  {
    names: RESOURCE_NAMES,
    heading: 'Records:',
    register: (p, reg, want) =>
      registerResources(p, reg, want, {
        list: async () => (await import('../commands/resources/list.js')).runList,
        get: async () => (await import('../commands/resources/get.js')).runGet,
        write: async () => (await import('../commands/resources/write.js')).runWrite,
        delete: async () => (await import('../commands/resources/delete.js')).runDelete,
      }),
  },
  {
    names: ['recordings'],
    register: (p, reg) =>
      registerRecordings(p, reg, {
        transcript: async () => (await import('../commands/recordings/transcript.js')).runTranscript,
        download: async () => (await import('../commands/recordings/download.js')).runDownload,
      }),
  },
  {
    names: ['links'],
    heading: LINKS,
    register: (p, reg) => registerLinks(p, reg, async () => (await import('../commands/links/run.js')).runLinks),
  },
  {
    names: ['batch'],
    heading: LINKS,
    register: (p, reg) => registerBatch(p, reg, async () => (await import('../commands/batch/run.js')).runBatch),
  },
  {
    names: ['v1'],
    heading: 'Version 1 (deprecated):',
    register: (p, reg) =>
      registerV1(p, reg, {
        query: async () => (await import('../commands/v1/query.js')).runV1Query,
        update: async () => (await import('../commands/v1/companies-update.js')).runV1CompanyUpdate,
      }),
  },
  {
    names: ['keys', 'keys-check'],
    register: (p, reg) =>
      registerKeys(p, reg, {
        add: async () => (await import('../commands/keys/add.js')).keysAdd,
        list: async () => (await import('../commands/keys/list.js')).keysList,
        use: async () => (await import('../commands/keys/use.js')).keysUse,
        remove: async () => (await import('../commands/keys/remove.js')).keysRemove,
        check: async () => (await import('../commands/keys/check.js')).keysCheck,
      }),
  },
  { names: ['api'], heading: LINKS, register: (p, reg) => registerApi(p, reg, async () => (await import('../commands/api/run.js')).runApi) },
  { names: ['__complete'], register: registerCompletion },
  { names: ['sandbox'], register: (p, reg) => registerSandbox(p, reg, async () => (await import('../commands/sandbox/run.js')).runSandbox) },
];
