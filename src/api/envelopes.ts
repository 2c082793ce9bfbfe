// zod schemas of the spec's response envelopes (version 2 and 1): the HTTP core checks every response
// with them, the sandbox's conformance tests what it sends. zod/mini: every request command loads them.
import * as z from 'zod/mini';

const metaSchema = z.object({ api_version: z.string(), request_id: z.string(), timestamp: z.string() });
const record = z.record(z.string(), z.unknown());

export const successEnvelope = z.object({ object: z.literal('success'), data: z.unknown(), meta: metaSchema });

const pageInfoSchema = z.object({ end_cursor: z.nullable(z.string()), has_next_page: z.boolean() });
export const listEnvelope = z.object({
  object: z.literal('list'),
  data: z.array(record),
  page_info: pageInfoSchema,
  meta: metaSchema,
});

const batchItemSchema = z.object({
  index: z.int().check(z.nonnegative()),
  status: z.enum(['created', 'error']),
  data: z.optional(record),
  error: z.optional(z.looseObject({ code: z.string(), message: z.string() })),
});

export const batchEnvelope = z.object({
  object: z.literal('batch'),
  data: z.object({
    items: z.array(batchItemSchema),
    summary: z.object({ total: z.int(), succeeded: z.int(), failed: z.int() }),
  }),
  meta: metaSchema,
});

const errorBodySchema = z.object({ code: z.string(), message: z.string(), details: z.array(record) });
export const errorEnvelope = z.object({ object: z.literal('error'), error: errorBodySchema, meta: metaSchema });

export const v2Envelope = z.discriminatedUnion('object', [successEnvelope, listEnvelope, batchEnvelope, errorEnvelope]);

/** Version 1: `{success, data}`; people queries add a top-level `nextCursor`. */
export const v1SuccessEnvelope = z.object({
  success: z.literal(true),
  data: z.unknown(),
  nextCursor: z.optional(z.nullable(z.string())),
});

/** Version 1 errors: the spec's error envelope rule applies to the whole service; `success: false` too. */
export const v1ErrorEnvelope = z.object({
  success: z.literal(false),
  error: z.partial(errorBodySchema, { details: true }),
  meta: z.optional(metaSchema),
});

export type Meta = z.infer<typeof metaSchema>;
export type ListEnvelope = z.infer<typeof listEnvelope>;
export type BatchEnvelope = z.infer<typeof batchEnvelope>;
export type BatchItem = z.infer<typeof batchItemSchema>;
export type ApiRecord = Record<string, unknown>;
