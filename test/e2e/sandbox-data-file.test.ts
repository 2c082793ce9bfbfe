// `crm sandbox --data-file F` stopped with SIGTERM (docs/sandbox.md, "Seed and data file"): it
// saves before it exits, so a write answered 2xx just before the signal is in F with its
// idempotency key, and the same key and body sent after a restart get the cached answer rather
// than a second record. The autosave (2 s after a change) has not run yet when the signal comes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startSandboxProcess, type SandboxProcess } from '../helpers/run-crm.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'crm-e2e-sandbox-file-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

type Started = SandboxProcess;

const startSandbox = (file: string) => startSandboxProcess(['--port', '0', '--seed', '11', '--data-file', file]);

const post = (sb: Started, body: unknown, key: string) =>
  fetch(`${sb.baseUrl}/contacts`, {
    method: 'POST',
    headers: { 'x-service-api-key': sb.admin, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });

it('SIGTERM right after a 2xx saves the record and its key; after a restart the same key replays', async () => {
  const file = path.join(dir, 'store.json');
  const body = { email: 'sigterm-save@example.test', first_name: 'Saved' };
  const a = await startSandbox(file);
  const first = await post(a, body, 'e2e-sigterm-1');
  expect(first.status).toBe(201);
  const firstText = await first.text();
  await a.stop();
  const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    records: { contacts: Array<{ email: string }> };
    idempotency: Array<{ key: string }>;
  };
  expect(saved.records.contacts.filter((c) => c.email === body.email)).toHaveLength(1);
  expect(saved.idempotency.map((e) => e.key)).toEqual(['e2e-sigterm-1']);

  const b = await startSandbox(file);
  try {
    const again = await post(b, body, 'e2e-sigterm-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(firstText);
    const list = await fetch(`${b.baseUrl}/contacts?email=${encodeURIComponent(body.email)}`, {
      headers: { 'x-service-api-key': b.admin },
    });
    expect(((await list.json()) as { data: unknown[] }).data).toHaveLength(1);
  } finally {
    await b.stop();
  }
}, 30_000);
