// Every top-level group in help order: the words that invoke it, its `crm --help` heading (default
// Setup), and the module each command loads when it runs (decided only here: start-up).
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { RESOURCE_NAMES } from '../api/resources.js';
import { registerApi } from '../commands/api/command.js';
import { registerBatch } from '../commands/batch/command.js';
import { registerKeys } from '../commands/keys/command.js';
import { registerLinks } from '../commands/links/command.js';
import { registerRecordings } from '../commands/recordings/command.js';
import { registerResources } from '../commands/resources/command.js';
import { registerSandbox } from '../commands/sandbox/command.js';
import { registerSnapshot } from '../commands/snapshot/command.js';
import { registerRestore } from '../commands/restore/command.js';
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
        list: () => import('../commands/resources/list.js').then((m) => m.runList),
        get: () => import('../commands/resources/get.js').then((m) => m.runGet),
        write: () => import('../commands/resources/write.js').then((m) => m.runWrite),
        delete: () => import('../commands/resources/delete.js').then((m) => m.runDelete),
      }),
  },
  {
    names: ['recordings'],
    register: (p, reg) =>
      registerRecordings(p, reg, {
        transcript: () => import('../commands/recordings/transcript.js').then((m) => m.runTranscript),
        download: () => import('../commands/recordings/download.js').then((m) => m.runDownload),
      }),
  },
  {
    names: ['links'],
    heading: LINKS,
    register: (p, reg) => registerLinks(p, reg, () => import('../commands/links/run.js').then((m) => m.runLinks)),
  },
  {
    names: ['batch'],
    heading: LINKS,
    register: (p, reg) => registerBatch(p, reg, () => import('../commands/batch/run.js').then((m) => m.runBatch)),
  },
  {
    names: ['v1'],
    heading: 'Version 1 (deprecated):',
    register: (p, reg) =>
      registerV1(p, reg, {
        query: () => import('../commands/v1/query.js').then((m) => m.runV1Query),
        update: () => import('../commands/v1/companies-update.js').then((m) => m.runV1CompanyUpdate),
      }),
  },
  {
    names: ['keys', 'keys-check'],
    register: (p, reg) =>
      registerKeys(p, reg, {
        add: () => import('../commands/keys/add.js').then((m) => m.keysAdd),
        list: () => import('../commands/keys/list.js').then((m) => m.keysList),
        use: () => import('../commands/keys/use.js').then((m) => m.keysUse),
        remove: () => import('../commands/keys/remove.js').then((m) => m.keysRemove),
        check: () => import('../commands/keys/check.js').then((m) => m.keysCheck),
      }),
  },
  {
    names: ['snapshot'],
    heading: LINKS,
    register: (p, reg) =>
      registerSnapshot(p, reg, () => import('../commands/snapshot/run.js').then((m) => m.runSnapshot)),
  },
  {
    names: ['restore'],
    heading: LINKS,
    register: (p, reg) => registerRestore(p, reg, () => import('../commands/restore/run.js').then((m) => m.runRestore)),
  },
  {
    names: ['api'],
    heading: LINKS,
    register: (p, reg) => registerApi(p, reg, () => import('../commands/api/run.js').then((m) => m.runApi)),
  },
  { names: ['__complete'], register: registerCompletion },
  {
    names: ['sandbox'],
    register: (p, reg) => registerSandbox(p, reg, () => import('../commands/sandbox/run.js').then((m) => m.runSandbox)),
  },
];
