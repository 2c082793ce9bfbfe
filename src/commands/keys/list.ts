// `crm keys list`: every profile with its roots, masked keys, auth header and the default marker.
import { deriveV1BaseUrl } from '../../config/base-url.js';
import { openConfigStore } from '../../config/store.js';
import { maskKey } from '../../http/mask.js';
import { createListWriter } from '../../output/writers.js';
import type { Ctx } from '../context.js';
import { outputOptions } from '../shared/output-options.js';

// What a reader came for first: profile, where it points, which key. At 80 columns the later
// columns give way; profile names, URLs and keys are never cut.
const TABLE_COLUMNS = ['profile', 'base_url', 'api_key', 'default', 'auth_header', 'v1_api_key', 'v1_base_url'];
const TABLE_WHOLE = ['base_url', 'api_key', 'v1_api_key', 'v1_base_url'];

export async function keysList(_opts: unknown, ctx: Ctx): Promise<void> {
  const store = await openConfigStore(ctx.configDir());
  const dflt = store.defaultProfile();
  const rows = store.profileNames().map((name) => {
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
    ctx.warn(
      'No profiles yet. Add one with: crm keys add <profile> --base-url URL (the key is read from stdin or a prompt)',
    );
    return;
  }
  const options = outputOptions(ctx, { columns: TABLE_COLUMNS, pinned: ['profile'], whole: TABLE_WHOLE });
  const writer = createListWriter(format, ctx.io.stdout, options);
  for (const row of rows) {
    // a table shows the default as a marker; machine formats keep the boolean
    await writer.write(
      format === 'table'
        ? { ...row, default: row.default ? '*' : '', api_key: row.api_key ?? '', v1_api_key: row.v1_api_key ?? '' }
        : row,
    );
  }
  await writer.end();
}
