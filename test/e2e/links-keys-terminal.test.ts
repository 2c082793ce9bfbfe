// `crm links import` by natural key on a terminal (tmux, 80 columns): a line while a side's collection is read (its
// records counted), the plan, then a line while the links go (how many of how many); the lines cleared at the end.
// The trial's finding: a long run showed nothing between its start and its plan, nor while it sent.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiData } from '../helpers/api-data.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDir } from '../helpers/temp.js';
import { HAS_TMUX, sh, startTmux, type Tmux } from '../helpers/tmux.js';

const required = process.env.CRM_REQUIRE_SHELLS === '1';
let t: TestSandbox;
let tm: Tmux;
const CONTACTS = 2000;
const PAIRS = 60;
beforeAll(async () => {
  if (!HAS_TMUX) return;
  t = await startTestSandbox({ seed: 5, rateLimit: 1_000_000, orgRateLimit: 1_000_000 });
  for (let from = 0; from < CONTACTS; from += 100)
    await apiData(
      t,
      'POST',
      '/contacts/batch',
      Array.from({ length: 100 }, (_, i) => ({ email: `tty${from + i}@example.test`, first_name: 'Tty' })),
    );
  await apiData(t, 'POST', '/deals', { name: 'TTY renewal' });
  tm = await startTmux();
});
afterAll(async () => {
  await tm?.close();
  await t?.close();
});

describe.skipIf(!HAS_TMUX && !required)('crm links import by natural key in tmux', () => {
  it('shows the records read, then the links sent, and clears both lines', async () => {
    const dir = tempDir('crm-links-tty-');
    const file = join(dir, 'pairs.csv');
    const rows = Array.from({ length: PAIRS }, (_, i) => `TTY renewal,tty${i * 31}@example.test`);
    writeFileSync(file, ['deal.name,contact.email', ...rows].join('\n') + '\n');
    await t.control('/faults', { latency_ms: 60 }); // 21 pages read one at a time, then 60 POSTs one at a time
    try {
      const pane = await tm.run(`crm links import deals contacts ${sh(file)} --concurrency 1`, { env: t.env('admin') });
      await pane.waitFor(/reading contacts for 60 keys: [\d,]+ records read/, { timeoutMs: 30_000 });
      const sending = await pane.waitFor(/linking: \d+ of 60 sent/, { timeoutMs: 30_000 });
      expect(sending.join('\n')).toMatch(/60\s+to link/); // the plan is printed above the line
      const { status, lines } = await pane.waitExit(60_000);
      const text = lines.join('\n');
      expect(status, text).toBe(0);
      expect(text).not.toMatch(/reading contacts for|linking: \d+ of/); // cleared
      expect(text).toContain('Linked 60 of 60 rows');
    } finally {
      await t.control('/faults', { latency_ms: 0 });
    }
  }, 120_000);

  it('a records file: the same lines while its links are read and made, each named by its relation', async () => {
    const dir = tempDir('crm-links-tty-');
    const file = join(dir, 'deals.csv');
    const emails = Array.from({ length: 30 }, (_, i) => `tty${i * 7}@example.test`).join(';');
    writeFileSync(file, `name,contacts.email\nTTY renewal,${emails}\n`);
    await t.control('/faults', { latency_ms: 150 }); // 21 pages of contacts, then 29 POSTs one at a time
    try {
      const pane = await tm.run(`crm batch deals ${sh(file)} --match name --concurrency 1`, { env: t.env('admin') });
      await pane.waitFor(/deals contacts: (reading contacts for 30 keys|linking: \d+ of 29 sent)/, {
        timeoutMs: 40_000,
      });
      const { status, lines } = await pane.waitExit(60_000);
      const text = lines.join('\n');
      expect(status, text).toBe(0);
      expect(text).not.toMatch(/deals contacts: (reading|linking)/); // cleared
    } finally {
      await t.control('/faults', { latency_ms: 0 });
    }
  }, 120_000);
});
