// The pure decisions of `crm snapshot --links` (src/commands/snapshot/links.ts, progress-text.ts): which
// kinds a --resources choice takes, what the plan and the cost line say, and the progress line.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LINK_KINDS } from '../../../../src/api/snapshot-links.js';
import { SNAPSHOT_RESOURCES } from '../../../../src/commands/snapshot/run.js';
import { linkKindsFor, linksAskText, linksCost, linksCostLine, minutesText } from '../../../../src/commands/snapshot/links.js';
import { linksProgressText } from '../../../../src/commands/snapshot/progress-text.js';
import { runs } from '../../../helpers/property.js';

const chosenArb = fc.subarray([...SNAPSHOT_RESOURCES]);

describe('snapshot --links: the kinds taken', () => {
  it('every kind is either taken (its parent chosen) or left out saying why, never both, in the table order', () => {
    fc.assert(
      fc.property(chosenArb, (chosen) => {
        const { taken, leftOut } = linkKindsFor(chosen);
        expect(taken.length + leftOut.length).toBe(LINK_KINDS.length);
        for (const k of taken) expect(chosen).toContain(k.parent);
        for (const l of leftOut) {
          const kind = LINK_KINDS.find((k) => k.key === l.what)!;
          expect(chosen).not.toContain(kind.parent);
          expect(l.reason).toBe(`links of ${kind.parent}, which are not in --resources`);
        }
        expect(taken).toEqual(LINK_KINDS.filter((k) => taken.includes(k)));
      }),
      runs(),
    );
  });

  it('the plan names each parent once, with ×2 for two kinds', () => {
    expect(linksAskText(LINK_KINDS)).toBe('a request per deal (×2), note, segment and meeting (×2)');
    expect(linksAskText(linkKindsFor(['notes']).taken)).toBe('a request per note');
    expect(linksAskText(linkKindsFor(['contacts']).taken)).toMatch(/^no links: /);
  });
});

describe('snapshot --links: the cost', () => {
  it('requests are the parents left of every kind; minutes those over the limit a minute, said rounded up, never 0 for some', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(100_000), { maxLength: 6 }), fc.integer({ min: 1, max: 100_000 }), (parents, perMinute) => {
        const cost = linksCost(
          parents.map((n) => ({ parents: n })),
          perMinute,
        );
        const requests = parents.reduce((a, b) => a + b, 0);
        expect(cost.requests).toBe(requests);
        expect(cost.minutes).toBeCloseTo(requests / perMinute, 9);
        const said = Number(minutesText(cost.minutes));
        expect(said).toBeGreaterThanOrEqual(cost.minutes - 1e-9);
        expect(said - cost.minutes).toBeLessThan(cost.minutes < 10 ? 0.1 + 1e-9 : 1);
        if (requests > 0) expect(said).toBeGreaterThan(0);
      }),
      runs(),
    );
  });

  it("the line says the requests, per parent, and the minutes at the server's limit or the spec's", () => {
    const left = LINK_KINDS.map((kind) => ({ kind, parents: { deals: 130, notes: 10, segments: 4, meetings: 40 }[kind.parent as string]! }));
    expect(linksCostLine(left, { perMinute: 600, reported: true }, false)).toBe(
      "Links: 354 requests, one per deal (130 ×2), note (10), segment (4) and meeting (40 ×2) (one more per 100 links of a parent): about 0.6 min at 600 requests a minute (the server's rate limit)",
    );
    expect(linksCostLine(left.slice(2, 3), { perMinute: 200, reported: false }, true)).toBe(
      "Links: 10 requests left, one per note (10) (one more per 100 links of a parent): about 0.1 min at 200 requests a minute (the spec's limit: the server has not said its own)",
    );
    expect(linksCostLine([], { perMinute: 200, reported: false }, true)).toBe('Links: nothing left to read');
  });
});

describe('snapshot --links: the progress line', () => {
  it('parents done of all, the links, an ETA while there is one, a wait of a second or more', () => {
    const base = { index: 0, kinds: 6, key: 'deals.contacts', parent: 40, parents: 130, links: 57, waitMs: 0 };
    expect(linksProgressText({ ...base, etaMs: 63_000 })).toBe('Links 1/6: deals.contacts 40/130 parents · 57 links · ETA 1m3s');
    expect(linksProgressText({ ...base, etaMs: undefined, waitMs: 12_000 })).toBe(
      'Links 1/6: deals.contacts 40/130 parents · 57 links · waiting 12s (rate limit)',
    );
    expect(linksProgressText({ ...base, etaMs: 0, waitMs: 999 })).toBe('Links 1/6: deals.contacts 40/130 parents · 57 links');
  });
});
