// `crm snapshot DIR --links` (issue 19): after the collections, each parent record's links
// (`/deals/{id}/contacts` … cursor-paginated) and a meeting's deal and company (`/meetings/{id}/deal`,
// `data` the record or null), one file per kind `DIR/links/<parent>.<relation>.ndjson`, each line
// `{"parent_id", "record"}` (src/api/snapshot-links.ts). Resumable like a collection (paged-file.ts):
// the state says which parent (its index in DIR/<parent>.ndjson) and the cursor within it. A parent
// gone since its collection was read (404) is skipped and counted (`parents_gone`).
import { countTextLines, textLines } from '../../util/text-lines.js';
import path from 'node:path';
import type { ApiRecord } from '../../api/envelopes.js';
import { findResource, PAGE_SIZE_MAX, type ResourceName } from '../../api/resources.js';
import { LINK_KINDS, LINKS_DIR, linkFile, type LinkKind } from '../../api/snapshot-links.js';
import { NotFoundError } from '../../http/errors.js';
import { recordPath } from '../../http/url.js';
import { costAtLimitText, etaMs, sendingRateNow, SendingRate } from '../../output/eta.js';
import { count, plural } from '../../output/plural.js';
import { parseJson, stringifyJson } from '../../json/exact-json.js';
import { ensureDir } from '../../util/fs.js';
import { linksProgressText } from './progress-text.js';
import { pagedState, refusedCursor, writePaged, type PagedWriter } from './paged-file.js';
import type { SnapshotRun } from './types.js';
import { idJson } from './written-ids.js';

/** The links' kinds a snapshot of `chosen` takes, and those it leaves out (their parents not taken). */
export function linkKindsFor(chosen: readonly ResourceName[]): {
  taken: LinkKind[];
  leftOut: Array<{ what: string; reason: string }>;
} {
  const taken = LINK_KINDS.filter((k) => chosen.includes(k.parent));
  const leftOut = LINK_KINDS.filter((k) => !chosen.includes(k.parent)).map((k) => ({
    what: k.key,
    reason: `links of ${k.parent}, which are not in --resources`,
  }));
  return { taken, leftOut };
}

/** The parents and how many kinds each has: `deal ×2, note, …` in the kinds' order. */
function perParent(kinds: readonly LinkKind[]): Array<{ parent: ResourceName; kinds: number }> {
  const out: Array<{ parent: ResourceName; kinds: number }> = [];
  for (const k of kinds) {
    const last = out.at(-1);
    if (last?.parent === k.parent) last.kinds++;
    else out.push({ parent: k.parent, kinds: 1 });
  }
  return out;
}

const andList = (items: string[]): string =>
  items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
const times = (n: number): string => (n > 1 ? ` (×${n})` : '');

/** The plan before anything is read: `a request per deal (×2), note, segment and meeting (×2)`. */
export function linksAskText(kinds: readonly LinkKind[]): string {
  if (kinds.length === 0) return 'no links: none of their parents (deals, notes, segments, meetings) is in --resources';
  return `a request per ${andList(perParent(kinds).map((p) => `${findResource(p.parent)!.singular}${times(p.kinds)}`))}`;
}

/** What the links left cost in requests: a request per parent and kind (a parent with over 100 links of a kind, one more per 100). */
export function linksRequests(left: ReadonlyArray<{ parents: number }>): number {
  return left.reduce((sum, k) => sum + k.parents, 0);
}

/** The line once the parents are counted, before the links start; `atLimit`: what n requests cost in time (costAtLimitText). */
export function linksCostLine(
  left: ReadonlyArray<{ kind: LinkKind; parents: number }>,
  atLimit: (requests: number) => string,
  resumed: boolean,
): string {
  const requests = linksRequests(left);
  if (requests === 0) return `Links: nothing ${resumed ? 'left ' : ''}to read`;
  // each parent's kinds' own counts: after an interruption one kind of a parent may be further on than another
  const parts = perParent(left.map((l) => l.kind)).map((p) => {
    const ns = left.filter((l) => l.kind.parent === p.parent).map((l) => l.parents);
    const same = ns.every((n) => n === ns[0]);
    return `${findResource(p.parent)!.singular} (${same ? `${count(ns[0]!)}${p.kinds > 1 ? ` ×${p.kinds}` : ''}` : ns.map(count).join(' + ')})`;
  });
  return (
    `Links: ${plural(requests, 'request')}${resumed ? ' left' : ''}, one per ${andList(parts)}` +
    ` (one more per 100 links of a parent): ${atLimit(requests)}`
  );
}

/** A kind's position: the parent being read (cursor set) or next to read (cursor null); `from`: where that parent's lines start. */
interface LinkAt {
  parent: number;
  cursor: string | null;
  from: number;
  gone: number;
}

const validAt = (a: unknown): a is LinkAt => {
  const o = a as Partial<LinkAt> | null;
  return (
    typeof o === 'object' &&
    o !== null &&
    Number.isInteger(o.parent) &&
    (o.cursor === null || typeof o.cursor === 'string') &&
    Number.isInteger(o.from) &&
    Number.isInteger(o.gone)
  );
};

/** The ids of DIR/<parent>.ndjson, in file order (a number id as its digits, exact: its path). */
async function parentIds(file: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const line of textLines(file)) ids.push(String((parseJson(line) as ApiRecord).id));
  return ids;
}

/** The ids (their JSON text) of the records written between `from` and `to` (the current parent's, before a rerun goes on). */
async function idsWritten(file: string, from: number, to: number): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const line of textLines(file, { start: from, end: to })) {
    const id = idJson((parseJson(line) as { record: ApiRecord }).record);
    if (id !== undefined) ids.add(id);
  }
  return ids;
}

const lineOf = (parentId: string, record: ApiRecord): string =>
  `{"parent_id":${JSON.stringify(parentId)},"record":${stringifyJson(record)}}\n`;

/** Every kind's file in turn; the manifest's `links` entry for each once it is finished. */
export async function snapshotLinks(run: SnapshotRun, kinds: readonly LinkKind[]): Promise<void> {
  const { dir, client, ctx, manifest } = run;
  ensureDir(path.join(dir, LINKS_DIR));
  const plans: Array<{ kind: LinkKind; ids: string[]; left: number; resumed: boolean }> = [];
  for (const kind of kinds) {
    const ids = await parentIds(path.join(dir, `${kind.parent}.ndjson`));
    const state = await pagedState(dir, linkFile(kind), validAt);
    plans.push({
      kind,
      ids,
      left: state.finished ? 0 : ids.length - (state.saved?.at.parent ?? 0),
      resumed: state.finished || !!state.saved,
    });
  }
  const left = plans.map((p) => ({ kind: p.kind, parents: p.left }));
  const atLimit = (requests: number) => costAtLimitText(requests, ctx.clock.now(), client.pace?.());
  ctx.warn(
    linksCostLine(
      left,
      atLimit,
      plans.some((p) => p.resumed),
    ),
  );

  let parentsLeft = left.reduce((sum, l) => sum + l.parents, 0);
  let requests = 0;
  const sending = new SendingRate();
  manifest.links ??= {};
  await run.withProgress(async (progress) => {
    for (const [i, { kind, ids }] of plans.entries()) {
      const show = (links: number, at: LinkAt | undefined) => {
        const now = ctx.clock.now();
        const info = client.pace?.();
        const eta = etaMs({
          requestsLeft: parentsLeft,
          now,
          pace: info,
          observedRatePerMs: sendingRateNow(sending, now, requests, info),
        });
        const where = { index: i, kinds: plans.length, key: kind.key, parent: at?.parent ?? 0, parents: ids.length };
        progress.update(linksProgressText({ ...where, links, etaMs: eta, waitMs: (info?.waitingUntil ?? 0) - now }));
      };
      const { records, at, forget } = await writePaged(dir, linkFile(kind), validAt, (w) =>
        readKind(run, kind, ids, w, (at, parentDone) => {
          requests++;
          if (parentDone) parentsLeft--;
          show(w.records, at);
        }),
      );
      const gone = at?.gone ?? run.earlier?.links?.[kind.key]?.parents_gone ?? 0;
      manifest.links![kind.key] = {
        file: linkFile(kind),
        parents: ids.length - gone,
        records: records ?? (await countTextLines(path.join(dir, linkFile(kind)))),
        parents_gone: gone,
        complete: true,
      };
      await run.save();
      await forget();
    }
  });
}

/** One kind's links, from where the writer's saved position says; `answered` after each request. */
async function readKind(
  run: SnapshotRun,
  kind: LinkKind,
  ids: readonly string[],
  w: PagedWriter<LinkAt>,
  answered: (at: LinkAt, parentDone: boolean) => void,
): Promise<void> {
  const { client, ctx } = run;
  let at: LinkAt = w.resume?.at ?? { parent: 0, cursor: null, from: 0, gone: 0 };
  // the children of the parent being read that are in the file already: never twice (a rerun within its pages, a cursor that cycles)
  let seen = at.cursor === null ? new Set<string>() : await idsWritten(w.partial, at.from, w.bytes);
  const next = (i: number, gone: number): LinkAt => ({ parent: i + 1, cursor: null, from: 0, gone });
  for (let i = at.parent; i < ids.length; i++) {
    const parentId = ids[i]!;
    const where = `${recordPath(kind.parent, parentId)}/${kind.relation}`;
    try {
      if (kind.association) {
        const res = await client.request<{ data: ApiRecord | null }>({
          method: 'GET',
          path: where,
          expect: 'success',
          signal: ctx.signal,
        });
        const record = res.body.data;
        at = next(i, at.gone);
        await w.page(record ? lineOf(parentId, record) : '', record ? 1 : 0, at);
        answered(at, true);
        continue;
      }
      const from = at.cursor !== null ? at.from : w.bytes;
      const read = async (cursor: string | undefined) => {
        for await (const page of client.pages(where, { limit: PAGE_SIZE_MAX, cursor, signal: ctx.signal })) {
          // by the ids' JSON text (a number id is not the string of its digits); a record without one always
          const fresh = page.data.filter((r) => {
            const id = idJson(r);
            return id === undefined || (!seen.has(id) && !!seen.add(id));
          });
          const more = page.hasNextPage && page.endCursor !== null;
          at = more ? { parent: i, cursor: page.endCursor, from, gone: at.gone } : next(i, at.gone);
          await w.page(fresh.map((r) => lineOf(parentId, r)).join(''), fresh.length, at);
          answered(at, !more);
        }
      };
      const resumed = at.cursor ?? undefined;
      // a cursor the earlier run saved, refused (expired): this parent's links again from their start,
      // those in the file already skipped
      await read(resumed).catch(async (err: unknown) => {
        if (resumed === undefined || at.cursor !== resumed || !refusedCursor(err) || err instanceof NotFoundError)
          throw err;
        await read(undefined);
      });
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      // the parent was deleted since its collection was read: skipped, counted
      at = next(i, at.gone + 1);
      await w.page('', 0, at);
      answered(at, true);
    }
    seen = new Set();
  }
}
