// Opaque list cursors: base64url of `{s, p}` where `s` is the creation sequence number of the
// last record returned and `p` the list it belongs to. Sequence numbers only grow, so paging is
// stable under inserts and deletes; a cursor of another list is refused like a garbled one.

export interface CursorPayload {
  /** sequence number of the last record of the page */
  seq: number;
  /** the list it was issued for, e.g. `contacts` or `deals/deal_1/contacts` */
  scope: string;
}

export function encodeCursor(payload: CursorPayload): string {
  return Buffer.from(JSON.stringify({ s: payload.seq, p: payload.scope }), 'utf8').toString('base64url');
}

/** The payload, or undefined when the cursor does not decode (→ 422 INVALID_CURSOR). */
export function decodeCursor(cursor: string): CursorPayload | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { s, p } = parsed as { s?: unknown; p?: unknown };
  if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0 || typeof p !== 'string') return undefined;
  return { seq: s, scope: p };
}

export interface Page<T> {
  items: T[];
  endCursor: string | null;
  hasNextPage: boolean;
}

/**
 * One page of `items` (already in creation order, each with its `seq`), after `afterSeq`.
 * `limit` is assumed valid (1..100).
 */
export function paginate<T extends { seq: number }>(items: Iterable<T>, scope: string, limit: number, afterSeq: number): Page<T> {
  const page: T[] = [];
  let hasNextPage = false;
  for (const item of items) {
    if (item.seq <= afterSeq) continue;
    if (page.length === limit) {
      hasNextPage = true;
      break;
    }
    page.push(item);
  }
  const last = page[page.length - 1];
  return { items: page, endCursor: last ? encodeCursor({ seq: last.seq, scope }) : null, hasNextPage };
}
