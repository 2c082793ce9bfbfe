// The pure decisions of `crm snapshot --links` (src/commands/snapshot/links.ts, progress-text.ts): which
// kinds a --resources choice takes, what the plan and the cost line say, and the progress line.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LINK_KINDS } from '../../../../src/api/snapshot-links.js';
import { SNAPSHOT_RESOURCES } from '../../../../src/commands/snapshot/run.js';
import { linkKindsFor, linksAskText, linksCostLine, linksRequests } from '../../../../src/commands/snapshot/links.js';
import { costAtLimitText, minutesText } from '../../../../src/output/eta.js';
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
  it('requests are the parents left of every kind; minutes the least the limit allows (its real window), said rounded up', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(100_000), { maxLength: 6 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1, max: 600 }),
        (parents, limit, windowS) => {
          const requests = linksRequests(parents.map((n) => ({ parents: n })));
          expect(requests).toBe(parents.reduce((a, b) => a + b, 0));
          const text = costAtLimitText(requests, 0, { limit, windowMs: windowS * 1000 });
          // a fresh window: `limit` at once, then `limit` per window
          const least = (Math.max(0, Math.ceil(requests / limit) - 1) * windowS) / 60;
          if (least < 0.1) expect(text).toMatch(/^under 0\.1 min at /);
          else {
            const said = Number(/^about ([\d.]+) min/.exec(text)![1]);
            expect(said).toBeGreaterThanOrEqual(least - 1e-9);
            expect(said - least).toBeLessThan(least < 10 ? 0.1 + 1e-9 : 1);
          }
          expect(text).toContain(
            `at ${limit.toLocaleString('en-US')} requests ${windowS === 60 ? 'a minute' : `per ${windowS.toLocaleString('en-US')} s`}`,
          );
        },
      ),
      runs(),
    );
    expect(minutesText(0.01)).toBe('0.1');
  });

  it('the window is the one the server uses: 2,400 requests at 10 per 2 s are 8 min, not 240 (10 a minute)', () => {
    expect(costAtLimitText(2_400, 0, { limit: 10, windowMs: 2_000 })).toBe(
      "about 8 min at 10 requests per 2 s (the server's rate limit)",
    );
    expect(costAtLimitText(480, 0, undefined)).toBe(
      "about 2.4 min at 200 requests a minute (the spec's limit: no answer has said the server's own yet)",
    );
  });

  it("at the spec's limit (no answer seen yet, as on a resumed run), the minutes are the requests at 200 a minute, none free", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), (requests) => {
        const text = costAtLimitText(requests, 0, undefined);
        const m = requests / 200;
        if (m < 0.1) expect(text).toMatch(/^under 0\.1 min at 200 requests a minute /);
        else expect(Number(/^about ([\d.]+) min/.exec(text)![1])).toBe(Number(minutesText(m)));
      }),
      runs(),
    );
    // the user's resumed run: 138 requests at 200 a minute
    expect(costAtLimitText(138, 0, undefined)).toMatch(/^about 0\.7 min at 200 requests a minute/);
  });

  it('the per-parent breakdown adds up to the requests, kinds of one parent left at different points (a resumed run)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(5_000), { minLength: LINK_KINDS.length, maxLength: LINK_KINDS.length }),
        fc.boolean(),
        (ns, resumed) => {
          const left = LINK_KINDS.map((kind, i) => ({ kind, parents: ns[i]! }));
          const line = linksCostLine(left, () => 'cost', resumed);
          const total = ns.reduce((a, b) => a + b, 0);
          if (total === 0) return;
          expect(line).toContain(`Links: ${total.toLocaleString('en-US')} request`);
          const breakdown = /one per (.*) \(one more per 100/.exec(line)![1]!;
          let sum = 0;
          for (const [, inner] of breakdown.matchAll(/\(([^)]*)\)/g)) {
            const times = /^([\d,]+) ×(\d+)$/.exec(inner!);
            if (times) sum += Number(times[1]!.replace(/,/g, '')) * Number(times[2]);
            else for (const n of inner!.split(' + ')) sum += Number(n.replace(/,/g, ''));
          }
          expect(sum).toBe(total);
        },
      ),
      runs(),
    );
    // the user's: deals.contacts 20 left, deals.companies all 80, meetings 12 each
    const left = LINK_KINDS.map((kind, i) => ({ kind, parents: [20, 80, 10, 4, 12, 12][i]! }));
    expect(linksCostLine(left, () => 'cost', true)).toBe(
      'Links: 138 requests left, one per deal (20 + 80), note (10), segment (4) and meeting (12 ×2) (one more per 100 links of a parent): cost',
    );
  });

  it("the line says the requests, per parent, and the minutes at the server's limit or the spec's", () => {
    const left = LINK_KINDS.map((kind) => ({
      kind,
      parents: { deals: 130, notes: 10, segments: 4, meetings: 40 }[kind.parent as string]!,
    }));
    const at = (pace?: { limit: number; windowMs: number }) => (n: number) => costAtLimitText(n, 0, pace);
    expect(linksCostLine(left, at({ limit: 100, windowMs: 60_000 }), false)).toBe(
      "Links: 354 requests, one per deal (130 ×2), note (10), segment (4) and meeting (40 ×2) (one more per 100 links of a parent): about 3 min at 100 requests a minute (the server's rate limit)",
    );
    expect(linksCostLine(left.slice(2, 3), at(), true)).toBe(
      "Links: 10 requests left, one per note (10) (one more per 100 links of a parent): under 0.1 min at 200 requests a minute (the spec's limit: no answer has said the server's own yet)",
    );
    expect(linksCostLine([], at(), true)).toBe('Links: nothing left to read');
  });
});

describe('snapshot --links: the progress line', () => {
  it('parents done of all, the links, an ETA while there is one, a wait of a second or more', () => {
    const base = { index: 0, kinds: 6, key: 'deals.contacts', parent: 40, parents: 130, links: 57, waitMs: 0 };
    expect(linksProgressText({ ...base, etaMs: 63_000 })).toBe(
      'Links 1/6: deals.contacts 40/130 parents · 57 links · ETA 1m3s',
    );
    expect(linksProgressText({ ...base, etaMs: undefined, waitMs: 12_000 })).toBe(
      'Links 1/6: deals.contacts 40/130 parents · 57 links · waiting 12s (rate limit)',
    );
    expect(linksProgressText({ ...base, etaMs: 0, waitMs: 999 })).toBe(
      'Links 1/6: deals.contacts 40/130 parents · 57 links',
    );
  });
});
