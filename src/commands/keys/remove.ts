// `crm keys remove <profile>`: deletes the profile and its keys; removing the default clears it.
import { openConfigStore, unknownProfileError } from '../../config/store.js';
import type { Ctx } from '../context.js';
import { printIfJson } from '../shared/output-options.js';
import type { KeysProfileOptions } from './command.js';

export async function keysRemove(opts: KeysProfileOptions, ctx: Ctx): Promise<void> {
  const store = await openConfigStore(ctx.configDir());
  const wasDefault = store.defaultProfile() === opts.profile;
  if (!store.removeProfile(opts.profile)) throw unknownProfileError(opts.profile, store.profileNames(), store.path);
  const left = store.profileNames();
  let message = `Removed profile "${opts.profile}" and its keys.`;
  if (wasDefault) {
    message +=
      left.length > 0
        ? ` It was the default; there is none now. Choose one with: crm keys use <profile> (${left.join(', ')})`
        : ' It was the default; no profiles are left.';
  }
  ctx.warn(message);
  await printIfJson(ctx, { profile: opts.profile, removed: true, default_cleared: wasDefault });
}
