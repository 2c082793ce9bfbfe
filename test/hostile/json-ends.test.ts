// JSON that ends (issue 17): when a later page fails, standard output is still one whole JSON
// document (or whole NDJSON lines), and crm exits with the error's own code, the error on stderr.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCrm } from '../helpers/run-crm.js';
import { contact, errorEnvelope, json, listPage, startHostile, type Hostile } from './server.js';

let h: Hostile;
beforeAll(async () => {
  h = await startHostile();
});
afterAll(async () => h?.close());
beforeEach(() => h.reset());

/** Page 1 holds two contacts and a cursor; page 2 answers 403 (not retried). */
function pageTwoFails(): void {
  h.route('GET', '/contacts', (req, res) => {
    if (req.query.get('cursor') === null) json(res, 200, listPage([contact(1), contact(2)], 'p2', true));
    else json(res, 403, errorEnvelope('FORBIDDEN', 'page two is not yours'));
  });
}

describe('page 2 fails', () => {
  it.each([
    ['list --all -o json', ['-o', 'json', 'contacts', 'list', '--all']],
    ['api --paginate', ['api', 'GET', '/contacts', '--paginate']],
    ['api --paginate -o json', ['-o', 'json', 'api', 'GET', '/contacts', '--paginate']],
  ])('%s: stdout is one whole JSON array of page 1, exit 4 with the error on stderr', async (_name, args) => {
    pageTwoFails();
    const r = await runCrm(args, { env: h.env() });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/page two is not yours/);
    expect((JSON.parse(r.stdout) as Array<{ id: string }>).map((c) => c.id)).toEqual(['con_000001', 'con_000002']);
  });

  it('list --all -o ndjson: whole lines only', async () => {
    pageTwoFails();
    const r = await runCrm(['-o', 'ndjson', 'contacts', 'list', '--all'], { env: h.env() });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stdout.endsWith('\n')).toBe(true);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: string }).id),
    ).toEqual(['con_000001', 'con_000002']);
  });
});
