// `crm snapshot DIR --links` on a terminal (tmux, 80 columns): the plan first, a collection's progress
// with its records and pages (no ETA), the links' cost line, then the links' progress with an ETA; the
// progress lines cleared at the end, the plan and the cost left above the last line.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { HAS_TMUX, sh, startTmux, type Tmux } from '../helpers/tmux.js';

const required = process.env.CRM_REQUIRE_SHELLS === '1';
let t: TestSandbox;
let tm: Tmux;
beforeAll(async () => {
  if (!HAS_TMUX) return;
  t = await startTestSandbox({
    seed: 3,
    seedRecords: { deals: 40, contacts: 400 },
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
  });
  tm = await startTmux();
});
afterAll(async () => {
  await tm?.close();
  await t?.close();
});

describe.skipIf(!HAS_TMUX && !required)('crm snapshot --links in tmux', () => {
  it('shows records and pages while collections are read, then the parents done and an ETA while the links are', async () => {
    await t.control('/faults', { latency_ms: 40 }); // ~5 pages of contacts, then 104 link requests one at a time
    try {
      const dir = join(tempDir('crm-snapshot-tty-'), 'b');
      const pane = await tm.run(`crm snapshot ${sh(dir)} --resources contacts,deals,meetings --links -o table`, {
        env: t.env('admin'),
      });
      await pane.waitFor(/Snapshot 1\/3: contacts \d+ records, \d+ pages?/, { timeoutMs: 20_000 });
      const links = await pane.waitFor(/Links [1-4]\/4: \S+ \d+\/\d+ parents · \d+ links? · ETA \d+s/, {
        timeoutMs: 30_000,
      });
      expect(links.join('\n')).not.toMatch(/Snapshot \d\/3: .*ETA/);
      const { status, lines } = await pane.waitExit(60_000);
      const text = lines.join('\n');
      expect(status, text).toBe(0);
      expect(text).toContain('then the links: a request per deal (×2) and meeting (×2)');
      expect(text).toMatch(/Links: 104 requests, one per deal \(40 ×2\) and meeting \(12 ×2\)/);
      expect(text).not.toMatch(/Snapshot \d\/3:|Links \d\/4:/); // the progress lines are cleared
      expect(text).toMatch(/Snapshot complete: 452 records in 3 collections and \d+ links, in\s/);
    } finally {
      await t.control('/faults', { latency_ms: 0 });
    }
  }, 120_000);
});
