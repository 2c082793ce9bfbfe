// `crm keys list`: every profile with its roots, masked keys, auth header and the default marker.
import { deriveV1BaseUrl } from '../../config/base-url.js';
import { openConfigStore } from '../../config/store.js';
import { maskKey } from '../../http/mask.js';
import { createListWriter } from '../../output/writers.js';
import type { Ctx } from '../context.js';

export interface ProfileRow {
  profile: string;
  default: boolean;
  base_url: string;
  /** the stored v1 root, else the derived one */
  v1_base_url: string | null;
  api_key: string | null;
  v1_api_key: string | null;
  auth_header: string;
}

const TABLE_COLUMNS = ['default', 'profile', 'base_url', 'v1_base_url', 'api_key', 'v1_api_key', 'auth_header'];

export async function keysList(_opts: unknown, ctx: Ctx): Promise<void> {
  const store = await openConfigStore(ctx.configDir());
  const dflt = store.defaultProfile();
  const rows: ProfileRow[] = store.profileNames().map((name) => {
    const p = store.getProfile(name)!;
    return {
      profile: name,
      default: name === dflt,
      base_url: p.base_url,
      v1_base_url: p.v1_base_url ?? deriveV1BaseUrl(p.base_url) ?? null,
      api_key: p.api_key === undefined ? null : maskKey(p.api_key),
      v1_api_key: p.v1_api_key === undefined ? null : maskKey(p.v1_api_key),
      auth_header: p.auth_header,
    };
  });
  const format = ctx.format();
  if (rows.length === 0 && format === 'table') {
    ctx.warn('No profiles yet. Add one with: crm keys add <profile> --base-url URL (the key is read from stdin or a prompt)');
    return;
  }
  const writer = createListWriter(format, ctx.io.stdout, { fields: ctx.globals.fields, columns: TABLE_COLUMNS, color: ctx.globals.color });
  for (const row of rows) {
    // A table shows the default as a marker; machine formats keep the boolean.
    await writer.write(format === 'table' ? { ...row, default: row.default ? '*' : '', api_key: row.api_key ?? '', v1_api_key: row.v1_api_key ?? '' } : row);
  }
  await writer.end();
}
