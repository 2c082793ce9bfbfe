// The config file's shape, checked with zod on load so that a hand-edited file that went wrong
// gives a clear usage error naming the file and the field, not a crash deep in a command.
import * as z from 'zod';
import { UsageError } from '../http/errors.js';
import type { ConfigData } from './types.js';

const profileSchema = z
  .object({
    base_url: z.string().min(1),
    v1_base_url: z.string().min(1).optional(),
    api_key: z.string().min(1).optional(),
    v1_api_key: z.string().min(1).optional(),
    auth_header: z.enum(['x-api-key', 'bearer']).default('x-api-key'),
  })
  .loose();

const configSchema = z
  .object({
    profiles: z.record(z.string(), profileSchema).default({}),
    default_profile: z.string().optional(),
  })
  .loose();

export function parseConfigData(raw: unknown, file: string): ConfigData {
  const result = configSchema.safeParse(raw ?? {});
  if (!result.success) {
    const problems = result.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`)
      .join('; ');
    throw new UsageError(`The config file ${file} is malformed: ${problems}. Fix it or delete it and add the profiles again.`);
  }
  const data = result.data;
  // Only the known fields go back to disk: unknown ones are dropped on the next write.
  const profiles: ConfigData['profiles'] = {};
  for (const [name, p] of Object.entries(data.profiles)) {
    profiles[name] = {
      base_url: p.base_url,
      ...(p.v1_base_url !== undefined && { v1_base_url: p.v1_base_url }),
      ...(p.api_key !== undefined && { api_key: p.api_key }),
      ...(p.v1_api_key !== undefined && { v1_api_key: p.v1_api_key }),
      auth_header: p.auth_header,
    };
  }
  return { profiles, ...(data.default_profile !== undefined && { default_profile: data.default_profile }) };
}
