// zod schemas of the spec's response envelopes (spec: "Response envelope (version 2)" and
// "Version 1 shapes"). The HTTP core checks every response against them; the sandbox's
// conformance tests check what it sends against the same schemas.
// A namespace import, so that the bundler keeps only the parts of zod used here.
import * as z from 'zod';

export const metaSchema = z.object({
  api_version: z.string(),
  request_id: z.string(),
  timestamp: z.string(),
});

const record = z.record(z.string(), z.unknown());

export const successEnvelope = z.object({
  object: z.literal('success'),
  data: z.unknown(),
  meta: metaSchema,
});

export const pageInfoSchema = z.object({
  end_cursor: z.string().nullable(),
  has_next_page: z.boolean(),
});

export const listEnvelope = z.object({
  object: z.literal('list'),
  data: z.array(record),
  page_info: pageInfoSchema,
  meta: metaSchema,
});

export const batchItemSchema = z.object({
  index: z.number().int().nonnegative(),
  status: z.enum(['created', 'error']),
  data: record.optional(),
  error: z.object({ code: z.string(), message: z.string() }).loose().optional(),
});

export const batchEnvelope = z.object({
  object: z.literal('batch'),
  data: z.object({
    items: z.array(batchItemSchema),
    summary: z.object({
      total: z.number().int(),
      succeeded: z.number().int(),
      failed: z.number().int(),
    }),
  }),
  meta: metaSchema,
});

export const errorBodySchema = z.object({
  code: z.string(),
  message: z.string(),
  details: z.array(record),
});

export const errorEnvelope = z.object({
  object: z.literal('error'),
  error: errorBodySchema,
  meta: metaSchema,
});

export const v2Envelope = z.discriminatedUnion('object', [
  successEnvelope,
  listEnvelope,
  batchEnvelope,
  errorEnvelope,
]);

/** Version 1: `{success, data}`; people queries add a top-level `nextCursor`. */
export const v1SuccessEnvelope = z.object({
  success: z.literal(true),
  data: z.unknown(),
  nextCursor: z.string().nullable().optional(),
});

/** Version 1 errors: the spec's error envelope rule applies to the whole service; `success: false` too. */
export const v1ErrorEnvelope = z.object({
  success: z.literal(false),
  error: errorBodySchema.partial({ details: true }),
  meta: metaSchema.optional(),
});

export type Meta = z.infer<typeof metaSchema>;
export type SuccessEnvelope = z.infer<typeof successEnvelope>;
export type ListEnvelope = z.infer<typeof listEnvelope>;
export type BatchEnvelope = z.infer<typeof batchEnvelope>;
export type BatchItem = z.infer<typeof batchItemSchema>;
export type ErrorEnvelope = z.infer<typeof errorEnvelope>;
export type V2Envelope = z.infer<typeof v2Envelope>;
export type V1SuccessEnvelope = z.infer<typeof v1SuccessEnvelope>;
export type ApiRecord = Record<string, unknown>;
