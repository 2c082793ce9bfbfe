// Opaque, tamper-evident list cursors (docs/sandbox.md, "Lists and pagination"). A cursor names
// the creation sequence number of the last record returned and the list it belongs to; it is
// sealed under a per-sandbox secret (random, or derived from the seed so seeded runs stay
// deterministic): a 16-byte HMAC-SHA256 tag of the payload, then the payload XORed with a
// keystream derived from the tag, all base64url. A client cannot read one, build one, or alter
// one: anything the sandbox did not issue for that list is 422 INVALID_CURSOR. Sequence numbers
// only grow, so paging is stable under inserts and deletes.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface CursorPayload {
  /** sequence number of the last record of the page */
  seq: number;
  /** the list it was issued for, e.g. `contacts` or `deals/deal_1/contacts` */
  scope: string;
}

const TAG_BYTES = 16;

export class CursorCodec {
  private readonly macKey: Buffer;
  private readonly streamKey: Buffer;

  constructor(secret: Buffer) {
    this.macKey = createHmac('sha256', secret).update('cursor-mac').digest();
    this.streamKey = createHmac('sha256', secret).update('cursor-stream').digest();
  }

  /** A codec under a random secret, or under one derived from `seed`. */
  static forSeed(seed?: number): CursorCodec {
    const secret = seed === undefined ? randomBytes(32) : createHash('sha256').update(`crm-sandbox-cursor:${seed}`).digest();
    return new CursorCodec(secret);
  }

  encode(payload: CursorPayload): string {
    const plain = Buffer.from(`${payload.seq}\n${payload.scope}`, 'utf8');
    const tag = this.tag(plain);
    return Buffer.concat([tag, xor(plain, this.keystream(tag, plain.length))]).toString('base64url');
  }

  /** The payload, or undefined when the cursor was not issued by this sandbox (→ 422 INVALID_CURSOR). */
  decode(cursor: string): CursorPayload | undefined {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
    const bytes = Buffer.from(cursor, 'base64url');
    if (bytes.length <= TAG_BYTES || bytes.toString('base64url') !== cursor) return undefined;
    const tag = bytes.subarray(0, TAG_BYTES);
    const sealed = bytes.subarray(TAG_BYTES);
    const plain = xor(sealed, this.keystream(tag, sealed.length));
    if (!timingSafeEqual(tag, this.tag(plain))) return undefined;
    const m = /^(0|[1-9]\d{0,15})\n([^\n]*)$/.exec(plain.toString('utf8'));
    if (!m) return undefined;
    const seq = Number(m[1]);
    if (!Number.isSafeInteger(seq)) return undefined;
    return { seq, scope: m[2]! };
  }

  private tag(plain: Buffer): Buffer {
    return createHmac('sha256', this.macKey).update(plain).digest().subarray(0, TAG_BYTES);
  }

  private keystream(tag: Buffer, length: number): Buffer {
    const blocks: Buffer[] = [];
    for (let i = 0; blocks.length * 32 < length; i++) {
      blocks.push(createHmac('sha256', this.streamKey).update(tag).update(String(i)).digest());
    }
    return Buffer.concat(blocks).subarray(0, length);
  }
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

export interface Page<T> {
  items: T[];
  endCursor: string | null;
  hasNextPage: boolean;
}

/**
 * One page of the `items` that `keep` keeps (in creation order, each with its `seq`), after
 * `afterSeq`; reading stops once the page is full. `limit` is assumed valid (1..100).
 */
export function paginate<T extends { seq: number }>(
  items: Iterable<T>,
  scope: string,
  limit: number,
  afterSeq: number,
  codec: CursorCodec,
  keep: (item: T) => boolean = () => true,
): Page<T> {
  const page: T[] = [];
  let hasNextPage = false;
  for (const item of items) {
    if (item.seq <= afterSeq || !keep(item)) continue;
    if (page.length === limit) {
      hasNextPage = true;
      break;
    }
    page.push(item);
  }
  const last = page[page.length - 1];
  return { items: page, endCursor: last ? codec.encode({ seq: last.seq, scope }) : null, hasNextPage };
}
