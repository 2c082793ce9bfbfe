// The config file's shape, checked with zod on load: a hand-edited file that went wrong gives a
// usage error naming the file and the field. Unknown fields are dropped (on the next write too).
import * as z from 'zod';
import { UsageError } from '../http/errors.js';

const profileSchema = z.object({
  base_url: z.string().min(1),
  v1_base_url: z.string().min(1).optional(),
  api_key: z.string().min(1).optional(),
  v1_api_key: z.string().min(1).optional(),
  auth_header: z.enum(['x-api-key', 'bearer']).default('x-api-key'),
});

const configSchema = z.object({
  profiles: z.record(z.string(), profileSchema).default({}),
  default_profile: z.string().optional(),
});

/** A profile as written in the config file (snake_case, like the contract). */
export type StoredProfile = z.infer<typeof profileSchema>;
export type ConfigData = z.infer<typeof configSchema>;

export function parseConfigData(raw: unknown, file: string): ConfigData {
  const result = configSchema.safeParse(raw ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`)
    .join('; ');
  throw new UsageError(
    `The config file ${file} is malformed: ${problems}. Fix it or delete it and add the profiles again.`,
  );
}
