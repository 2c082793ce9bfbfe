// Opaque list cursors (docs/sandbox.md, "Lists and pagination"): the last sequence number (they only grow:
// paging is stable) and the list's name, sealed with AES-256-GCM (nonce = MAC of the payload: deterministic).
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/** `scope` names the list, e.g. `contacts` or `deals/deal_1/contacts`. */
type CursorPayload = { seq: number; scope: string };

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class CursorCodec {
  private readonly key: Buffer;
  private readonly ivKey: Buffer;

  constructor(secret: Buffer) {
    this.key = createHmac('sha256', secret).update('cursor-key').digest();
    this.ivKey = createHmac('sha256', secret).update('cursor-iv').digest();
  }

  /** A codec under a random secret, or under one derived from `seed`. */
  static forSeed(seed?: number): CursorCodec {
    const secret =
      seed === undefined ? randomBytes(32) : createHash('sha256').update(`crm-sandbox-cursor:${seed}`).digest();
    return new CursorCodec(secret);
  }

  encode(payload: CursorPayload): string {
    const plain = Buffer.from(`${payload.seq}\n${payload.scope}`, 'utf8');
    const iv = createHmac('sha256', this.ivKey).update(plain).digest().subarray(0, IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The payload, or undefined when the cursor was not issued by this sandbox (→ 422 INVALID_CURSOR). */
  decode(cursor: string): CursorPayload | undefined {
    const bytes = Buffer.from(cursor, 'base64url');
    // only canonical base64url: the bytes must read back as the same text
    if (bytes.length <= IV_BYTES + TAG_BYTES || bytes.toString('base64url') !== cursor) return undefined;
    let plain: string;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined; // not sealed under this sandbox's key
    }
    const m = /^(0|[1-9]\d{0,15})\n([^\n]*)$/.exec(plain);
    if (!m) return undefined;
    const seq = Number(m[1]);
    return Number.isSafeInteger(seq) ? { seq, scope: m[2]! } : undefined;
  }
}

/** One page of the `items` (in creation order) after `afterSeq` that `keep` keeps; reading stops once the page is full. */
export function paginate<T extends { seq: number }>(
  items: Iterable<T>,
  scope: string,
  limit: number,
  afterSeq: number,
  codec: CursorCodec,
  keep: (item: T) => boolean = () => true,
): { items: T[]; endCursor: string | null; hasNextPage: boolean } {
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
