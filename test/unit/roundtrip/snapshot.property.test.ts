// Issue 28, "Round trips are exact": `crm snapshot DIR` read back by `crm sandbox --from DIR` serves every record
// with the values it had (src/commands/snapshot/ writes, src/sandbox/snapshot-dir.ts reads). Values only: a
// snapshot's duplicates and locks are tested by their own suites. The snapshot is taken in this process from a
// server that keeps values exactly (helpers/exact-crm.ts); the sandbox serves it in this process too.
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiRecord } from '../../../src/api/envelopes.js';
import { parseJson } from '../../../src/json/exact-json.js';
import { startExactCrm, type ExactCrm } from '../../helpers/exact-crm.js';
import { runs } from '../../helpers/property.js';
import {
  AWKWARD_NAMES,
  canon,
  crmIn,
  freshFolder,
  held,
  jsonValue,
  plainText,
  records,
} from '../../helpers/round-trip.js';
import { startSandbox } from '../../helpers/sandbox.js';
import { tempDir } from '../../helpers/temp.js';

let crm: ExactCrm;
const root = tempDir('crm-rt-snapshot-');
beforeAll(async () => {
  crm = await startExactCrm();
});
afterAll(() => crm?.close());

/** Every contact the sandbox serves, as its answer's text says (numbers no double holds kept). */
async function served(dir: string): Promise<ApiRecord[]> {
  const sb = await startSandbox({ from: dir });
  try {
    const res = await fetch(`${sb.baseUrl}/contacts?limit=100`, { headers: { 'X-Service-Api-Key': sb.keys.admin } });
    return (parseJson(await res.text()) as { data: ApiRecord[] }).data;
  } finally {
    await sb.close();
  }
}

describe('crm snapshot DIR → crm sandbox --from DIR', () => {
  it.each([
    ['any JSON value (big numbers, 00501, blank, null, NFC/NFD, nested)', undefined, jsonValue],
    ['any field name (__proto__, constructor, a.b, spaces, commas, quotes, NFC/NFD)', AWKWARD_NAMES, plainText],
  ] as const)(
    'serves every record as it was: %s',
    async (_what, names, values) => {
      await fc.assert(
        fc.asyncProperty(records({ names, values }), async (list) => {
          crm.clear();
          const before = held(list);
          crm.put('contacts', before);
          const { dir, config } = freshFolder(root);
          const snap = join(dir, 'snap');
          const r = await crmIn(['snapshot', snap, '--resources', 'contacts'], crm.env(config));
          expect(r.code, r.err).toBe(0);
          expect((await served(snap)).map((c) => canon(c))).toEqual(before.map((c) => canon(c)));
        }),
        { ...runs(15), interruptAfterTimeLimit: 90_000, markInterruptAsFailure: true },
      );
    },
    180_000,
  );
});
