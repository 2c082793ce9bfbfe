// `crm keys use <profile>`: makes it the default profile.
import { openConfigStore } from '../../config/store.js';
import type { Ctx } from '../context.js';
import { printIfJson } from '../shared/output-options.js';
import type { KeysProfileOptions } from './command.js';

export async function keysUse(opts: KeysProfileOptions, ctx: Ctx): Promise<void> {
  const store = await openConfigStore(ctx.configDir());
  store.setDefault(opts.profile); // UsageError naming the profiles when unknown
  const p = store.getProfile(opts.profile)!;
  ctx.warn(`Default profile: ${opts.profile} (${p.base_url})`);
  await printIfJson(ctx, { profile: opts.profile, base_url: p.base_url, default: true });
}
