// How a chunk reaches the API (tests inject fakes).
import type { ApiRecord, BatchEnvelope } from '../../api/envelopes.js';
import { CrmError, InterruptedError, NotFoundError } from '../../http/errors.js';
import { RawNumber } from '../../json/exact-json.js';
import type { HttpClient } from '../../http/types.js';
import type { BatchSender, RowOperation } from '../shapes.js';
export type { BatchRequest, BatchResponse, BatchSender } from '../shapes.js';
import { keepBefore, type DeleteBackup, type KeptDelete } from '../files/backup.js';
import { ownRelations } from '../files/backup-links.js';

type Hooks = { onKept?: (what: string) => void; backup?: () => DeleteBackup | undefined };

/**
 * The engine's sender over the HTTP client (none: a dry run, which sends nothing): a row of the operation, else a
 * chunk of a batch create, or (reconcile) a row of the update the request carries (the plan's).
 */
export function httpSender(
  client: HttpClient | undefined,
  op: RowOperation | undefined,
  hooks: Hooks = {},
): BatchSender {
  if (!client) return () => Promise.reject(new Error('a dry run sends nothing'));
  if (op) return httpRowSender(client, op, hooks);
  const batch = httpBatchSender(client);
  let rows: { op: RowOperation; send: BatchSender } | undefined;
  return (req) => {
    if (!req.update) return batch(req);
    if (rows?.op !== req.update) rows = { op: req.update, send: httpRowSender(client, req.update) };
    return rows.send(req);
  };
}

/** No abort signal reaches the request: one cancelled in flight may have been written, and only its answer lets the journal record it. */
export function httpBatchSender(client: HttpClient): BatchSender {
  return async (req) => {
    const res = await client.request<BatchEnvelope>({
      method: 'POST',
      path: `/${req.resource}/batch`,
      // the chunk's own JSON, unless a number no double holds is about: then stringifyJson writes it exactly
      ...(RawNumber.seen ? { body: req.records } : { bodyJson: req.body }),
      idempotencyKey: req.key,
      expect: 'batch',
      finishInDoubt: true,
    });
    return { envelope: res.body, retries: res.retries, replayed: isReplayed(res.headers) };
  };
}

/** The server answered from its idempotency cache (`Idempotent-Replayed: true`, any case). */
function isReplayed(headers: Record<string, string> | undefined): boolean {
  return Object.entries(headers ?? {}).some(([k, v]) => k.toLowerCase() === 'idempotent-replayed' && v === 'true');
}

/** A row's answer as a one-item batch answer, so the engine, journal and rejects treat rows as chunks of one. */
function oneItem(result: { id: string } | { code: string; message: string }): BatchEnvelope {
  const ok = 'id' in result;
  const item = ok
    ? { index: 0, status: 'created', data: { id: result.id } }
    : { index: 0, status: 'error', error: result };
  const summary = { total: 1, succeeded: Number(ok), failed: Number(!ok) };
  return { object: 'batch', data: { items: [item], summary } } as BatchEnvelope;
}

/** The row's own failure (not the key, the scope, the limit or the server): a status saying this row was not done. */
function rowRefusal(err: unknown): err is CrmError {
  const s = err instanceof CrmError ? err.status : undefined;
  return s !== undefined && s >= 400 && s < 500 && ![401, 403, 408, 425, 429].includes(s);
}

/**
 * One request per row (RowOperation): PATCH and POST carry the row's Idempotency-Key. A refusal of the row
 * (404, 422, …) is that row's error, not the run's; a 404 to a DELETE sent again (a retry, or in doubt from
 * an earlier run) is the earlier attempt's success, and a 409 to a link is a link already there.
 */
function httpRowSender(client: HttpClient, op: RowOperation, { onKept, backup }: Hooks = {}): BatchSender {
  let parentChecked: Promise<void> | undefined;
  return async (req) => {
    const plan = op.plan(req.records[0]!);
    if (!plan.ok) throw new Error(`a row the check passed cannot be sent: ${plan.reason}`);
    const { method, path, body, target } = plan.request;
    const idempotencyKey = method === 'POST' || method === 'PATCH' ? req.key : undefined;
    const keep = method === 'DELETE' ? backup?.() : undefined;
    let failed: ((err: unknown, sentBefore: boolean) => void) | undefined;
    try {
      const kept = keep ? await keptOrRefused(client, { path, target, keep, resource: op.name }) : undefined;
      if (kept && 'refused' in kept) return { envelope: oneItem(kept.refused) };
      failed = kept?.failed;
      const res = await client.request({
        method,
        path,
        body,
        idempotencyKey,
        expect: 'v2',
        finishInDoubt: true,
        beforeSend: kept?.beforeSend,
      });
      if (op.kind === 'link' && body && onKept) keptFields(body, res.body, onKept);
      const replayed = isReplayed(res.headers) || res.goneOnRetry === true;
      return { envelope: oneItem({ id: target }), retries: res.retries, replayed };
    } catch (err) {
      // a DELETE the server refused: its record is still there, so the backup does not keep it as deleted
      failed?.(err, req.resent === true);
      if (err instanceof CrmError && err.status === 404 && op.goneIsDone && req.resent)
        return { envelope: oneItem({ id: target }), replayed: true };
      if (err instanceof NotFoundError && op.parentPath) await (parentChecked ??= parentMissing(client, op));
      if (err instanceof CrmError && err.status === 409 && op.kind === 'link')
        return { envelope: oneItem({ id: target }) };
      if (rowRefusal(err))
        return { envelope: oneItem({ code: err.code ?? `HTTP_${err.status}`, message: err.message }) };
      throw err;
    }
  };
}

/**
 * A DELETE's record and own links read for the backup (keepBefore); a read that failed (a links cursor that cycles, a
 * 500 after its retries) is the row's refusal: its DELETE was never sent, so it is not "in doubt", and the record stays
 * with its links (a hostile server's cycling links were taken for a DELETE sent without an answer). Ctrl-C and a key
 * refused (401, 403) stop the run as before.
 */
async function keptOrRefused(
  client: HttpClient,
  o: { path: string; target: string; keep: DeleteBackup; resource: string },
): Promise<KeptDelete | { refused: { code: string; message: string } }> {
  try {
    return await keepBefore(client, o.path, o.target, o.keep, o.resource);
  } catch (err) {
    if (!(err instanceof CrmError) || err instanceof InterruptedError || [401, 403].includes(err.status ?? 0))
      throw err;
    const what = ownRelations(o.resource).length > 0 ? 'it and its links' : 'it';
    const message = `not deleted: reading ${what} for the backup failed (${err.message}); nothing was sent for this row`;
    return { refused: { code: err.code ?? `HTTP_${err.status ?? 'ERROR'}`, message } };
  }
}

/** A link already there answers with its own fields (the spec: relinking is a no-op): a field asked otherwise was kept. */
function keptFields(sent: ApiRecord, answer: unknown, onKept: (what: string) => void): void {
  const data = (answer as { data?: unknown } | null)?.data;
  if (data === null || typeof data !== 'object') return;
  for (const [field, value] of Object.entries(sent)) {
    const had = (data as Record<string, unknown>)[field];
    if (field.endsWith('_id') || had === undefined || had === value) continue;
    onKept(
      `${Object.values(sent)[0] as string}: ${field} ${JSON.stringify(had)} kept (asked ${JSON.stringify(value)})`,
    );
  }
}

/**
 * After a 404 to a row of one parent: is the parent there? Looked up once (no request is spent on it
 * while rows succeed); a missing parent stops the run (exit 5) instead of failing every row.
 */
async function parentMissing(client: HttpClient, op: RowOperation): Promise<void> {
  await client.request({ method: 'GET', path: op.parentPath!, expect: 'success' }).catch((err: unknown) => {
    if (!(err instanceof NotFoundError)) throw err;
    const [parent] = op.name.split(' ');
    const id = decodeURIComponent(op.parentPath!.split('/').pop()!);
    throw new NotFoundError(`${parent} ${id} not found: nothing more was linked`, {
      ...{ status: err.status, code: err.code, requestId: err.requestId },
      hint: `check the id with \`crm ${parent} list\``,
    });
  });
}
