// What users see of their data, as inline snapshots (as wrangler does): a table for each command
// group, on an 80-column terminal without colours, against the sandbox seeded with 42 at a fixed
// clock. stdout and stderr are both shown (the fitting notice and the next-page hint are part of
// the table). In-process: crm's main() with fake streams, the sandbox on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { fakeIO } from '../../helpers/fake-io.js';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';

let t: TestSandbox;
beforeAll(async () => {
  t = await startTestSandbox({
    seed: 42,
    now: () => Date.UTC(2026, 0, 1),
    rateLimit: 1_000_000,
    orgRateLimit: 1_000_000,
  });
});
afterAll(async () => t?.close());

/**
 * crm's stdout on an 80-column terminal, then its stderr; the sandbox's port scrubbed (same width: the
 * table keeps its shape), and cursors, which are sealed with a random nonce (different on every run).
 */
async function table(args: string[], stdin?: string): Promise<string> {
  const f = fakeIO({ tty: stdin === undefined, columns: 80, stdin });
  const code = await main(args, { io: f.io, env: { ...t.env('admin'), NO_COLOR: '1' }, handleSignals: false });
  expect(code, f.err()).toBe(0);
  const text = f.err() === '' ? f.out() : `${f.out()}--- stderr\n${f.err()}`;
  const port = new URL(t.sb.baseUrl).port;
  return text.replaceAll(port, 'P'.repeat(port.length)).replace(/--cursor \S+/g, '--cursor <cursor>');
}

async function firstId(resource: string): Promise<string> {
  const res = await fetch(`${t.sb.baseUrl}/${resource}?limit=1`, { headers: { 'X-Service-Api-Key': t.sb.keys.admin } });
  return ((await res.json()) as { data: Array<{ id: string }> }).data[0]!.id;
}

describe('tables at 80 columns', () => {
  it('contacts list and get', async () => {
    expect(await table(['contacts', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌────────────────────┬────────────────────┬────────────┬───────────┬───────────┐
      │ id                 │ email              │ first_name │ last_name │ owner_id  │
      │ con_iorztmuulcgvoc │ ada.lovelace0@exa… │ Ada        │ Lovelace  │ usr_admin │
      │ con_5d03nqyvgp5951 │ grace.thompson1@e… │ Grace      │ Thompson  │ usr_admin │
      │ con_ss7nifggfbb5i9 │ alan.perlman2@exa… │ Alan       │ Perlman   │ usr_admin │
      └────────────────────┴────────────────────┴────────────┴───────────┴───────────┘
      --- stderr
      Table fitted to 80 columns: hidden company_id; cut email. To see everything: --wide, --fields id,company_id or -o json.
      More results: crm contacts list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
    expect(await table(['contacts', 'get', await firstId('contacts')])).toMatchInlineSnapshot(`
      "┌────────────┬───────────────────────────┐
      │ id         │ con_iorztmuulcgvoc        │
      │ email      │ ada.lovelace0@example.com │
      │ first_name │ Ada                       │
      │ last_name  │ Lovelace                  │
      │ company_id │ cmp_ppa9c17zkz56ka        │
      │ phone      │ +15551481901              │
      │ title      │ CEO                       │
      │ source     │ web                       │
      │ score      │ 0                         │
      │ vip        │ false                     │
      │ owner_id   │ usr_admin                 │
      │ created_at │ 2026-01-05T17:01:00.000Z  │
      │ updated_at │ 2026-01-05T17:01:00.000Z  │
      └────────────┴───────────────────────────┘
      "
    `);
  });
  it('companies', async () => {
    expect(await table(['companies', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌────────────────────┬─────────────┬─────────────────┬────────────┬───────────┐
      │ id                 │ name        │ domain          │ industry   │ owner_id  │
      │ cmp_uo6i9mvh8vqb7i │ Acme Inc    │ acme.example    │ finance    │ usr_admin │
      │ cmp_0gu1l1926sj06u │ Globex Inc  │ globex.example  │ healthcare │ usr_admin │
      │ cmp_bg11kl8n7aqui7 │ Initech Inc │ initech.example │ retail     │ usr_admin │
      └────────────────────┴─────────────┴─────────────────┴────────────┴───────────┘
      --- stderr
      More results: crm companies list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('deals', async () => {
    expect(await table(['deals', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌─────────────────────┬─────────────────┬────────┬─────────────┬───────────┐
      │ id                  │ name            │ amount │ stage       │ owner_id  │
      │ deal_wsmmiweyt3vpu8 │ Umbrella deal 1 │ 62000  │ negotiation │ usr_admin │
      │ deal_vedj1ayykj73va │ Globex deal 2   │ 84000  │ proposal    │ usr_admin │
      │ deal_a78wzndr6kglch │ Umbrella deal 3 │ 100000 │ negotiation │ usr_admin │
      └─────────────────────┴─────────────────┴────────┴─────────────┴───────────┘
      --- stderr
      Table fitted to 80 columns: hidden pipeline_id. To see everything: --wide, --fields id,pipeline_id or -o json.
      More results: crm deals list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('pipelines', async () => {
    expect(await table(['pipelines', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌─────────────────────┬──────────┬─────────────────────────────────┬───────────┐
      │ id                  │ name     │ stages                          │ owner_id  │
      │ pipe_zaeeaoc6nskzvw │ Sales    │ ["lead","qualified","proposal"… │ usr_admin │
      │ pipe_lidu92l04q686d │ Partners │ ["lead","qualified","proposal"… │ usr_admin │
      │ pipe_yhput9td92qrwh │ Renewals │ ["lead","qualified","proposal"… │ usr_admin │
      └─────────────────────┴──────────┴─────────────────────────────────┴───────────┘
      --- stderr
      Table fitted to 80 columns: cut stages. To see everything: --wide or -o json.
      "
    `);
  });
  it('tasks', async () => {
    expect(await table(['tasks', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌─────────────────────┬─────────────┬────────────┬────────┬───────────┐
      │ id                  │ title       │ due_date   │ status │ owner_id  │
      │ task_oxxrsn664wphja │ Follow up 1 │ 2026-01-06 │ open   │ usr_admin │
      │ task_vbezvq0ix831fa │ Follow up 2 │ 2026-01-07 │ done   │ usr_admin │
      │ task_ul2xclbhsqub63 │ Follow up 3 │ 2026-01-08 │ done   │ usr_admin │
      └─────────────────────┴─────────────┴────────────┴────────┴───────────┘
      --- stderr
      More results: crm tasks list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('notes', async () => {
    expect(await table(['notes', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌─────────────────────┬──────────────────────┬───────────┬─────────────────────┐
      │ id                  │ body                 │ owner_id  │ created_at          │
      │ note_a3uy1qmio5ndm6 │ Call notes #1: need… │ usr_admin │ 2026-01-07T17:07:0… │
      │ note_3g5ct4m13x1s89 │ Call notes #2: budg… │ usr_admin │ 2026-01-07T17:44:0… │
      │ note_jjzoodmg2my61x │ Call notes #3: budg… │ usr_admin │ 2026-01-07T18:21:0… │
      └─────────────────────┴──────────────────────┴───────────┴─────────────────────┘
      --- stderr
      Table fitted to 80 columns: cut body, created_at. To see everything: --wide or -o json.
      More results: crm notes list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('segments', async () => {
    expect(await table(['segments', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌────────────────────┬────────────┬────────────────┬───────────┐
      │ id                 │ name       │ description    │ owner_id  │
      │ seg_shv91kwintnogd │ Customers  │ Sample segment │ usr_admin │
      │ seg_9v4eq1roeh4ebx │ Prospects  │ Sample segment │ usr_admin │
      │ seg_z9t1wqn0y6267y │ Churn risk │ Sample segment │ usr_admin │
      └────────────────────┴────────────┴────────────────┴───────────┘
      --- stderr
      More results: crm segments list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('interactions', async () => {
    expect(await table(['interactions', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌────────────────────┬──────┬───────────┬───────────────┬──────────────────────┐
      │ id                 │ type │ direction │ title         │ interaction_date     │
      │ int_e6qtooimjj374b │ call │ outbound  │ Interaction 1 │ 2026-01-05T09:00:00… │
      │ int_oguv4xyu7hbhoi │ call │ inbound   │ Interaction 2 │ 2026-01-05T10:00:00… │
      │ int_6f4zb8k1o549pn │ call │ outbound  │ Interaction 3 │ 2026-01-05T11:00:00… │
      └────────────────────┴──────┴───────────┴───────────────┴──────────────────────┘
      --- stderr
      Table fitted to 80 columns: hidden owner_id; cut interaction_date. To see everything: --wide, --fields id,owner_id or -o json.
      More results: crm interactions list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('meetings', async () => {
    expect(await table(['meetings', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌────────────────────┬───────────┬───────────────────────┬─────────────────────┐
      │ id                 │ title     │ starts_at             │ deal_id             │
      │ mtg_h21pen1ock3i8w │ Meeting 1 │ 2026-01-05T09:00:00.… │ deal_vedj1ayykj73va │
      │ mtg_k4qbft1cn1wpd8 │ Meeting 2 │ 2026-01-05T11:00:00.… │                     │
      │ mtg_y48b2o8pgi6tpv │ Meeting 3 │ 2026-01-05T13:00:00.… │                     │
      └────────────────────┴───────────┴───────────────────────┴─────────────────────┘
      --- stderr
      Table fitted to 80 columns: hidden company_id, owner_id; cut starts_at. To see everything: --wide, --fields id,company_id,owner_id or -o json.
      More results: crm meetings list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('recordings', async () => {
    expect(await table(['recordings', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌────────────────────┬─────────────┬───────────────┬───────────────┬───────────┐
      │ id                 │ title       │ started_at    │ duration_sec… │ owner_id  │
      │ rec_t02nux3br6f3h8 │ Recording 1 │ 2026-01-05T0… │ 2928          │ usr_admin │
      │ rec_6v3cyji5ot55mb │ Recording 2 │ 2026-01-05T1… │ 2308          │ usr_admin │
      │ rec_t8bv7zx8zr8a73 │ Recording 3 │ 2026-01-05T1… │ 2670          │ usr_admin │
      └────────────────────┴─────────────┴───────────────┴───────────────┴───────────┘
      --- stderr
      Table fitted to 80 columns: hidden has_transcript; cut started_at, duration_seconds. To see everything: --wide, --fields id,has_transcript or -o json.
      More results: crm recordings list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('bookings', async () => {
    expect(await table(['bookings', 'list', '--limit', '3'])).toMatchInlineSnapshot(`
      "┌────────────────────┬───────────┬─────────────────────┬───────────┬───────────┐
      │ id                 │ title     │ starts_at           │ status    │ owner_id  │
      │ bkg_y6nghfhbr6as06 │ Booking 1 │ 2026-01-05T09:00:0… │ confirmed │ usr_admin │
      │ bkg_7ge621qsy5kwyi │ Booking 2 │ 2026-01-06T09:00:0… │ cancelled │ usr_admin │
      │ bkg_uuhv7kyczp1amw │ Booking 3 │ 2026-01-07T09:00:0… │ cancelled │ usr_admin │
      └────────────────────┴───────────┴─────────────────────┴───────────┴───────────┘
      --- stderr
      Table fitted to 80 columns: cut starts_at. To see everything: --wide or -o json.
      More results: crm bookings list --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('links', async () => {
    expect(await table(['links', 'list', 'deals', await firstId('deals'), 'contacts'])).toMatchInlineSnapshot(`
      "┌────────────────────┬───────────┬────────────────────┬────────────┬───────────┐
      │ id                 │ link.type │ email              │ first_name │ last_name │
      │ con_ca2mjlnl2vomft │ BLOCKER   │ edsger.ritchie35@… │ Edsger     │ Ritchie   │
      └────────────────────┴───────────┴────────────────────┴────────────┴───────────┘
      --- stderr
      Table fitted to 80 columns: hidden company_id, owner_id; hidden as empty in every row link.supervisor; cut email. To see everything: --wide, --fields id,company_id,owner_id or -o json.
      "
    `);
    expect(await table(['links', 'list', 'segments', await firstId('segments'), 'members', '--limit', '3']))
      .toMatchInlineSnapshot(`
      "┌────────────────────┬────────────────────┬────────────┬───────────┬───────────┐
      │ id                 │ email              │ first_name │ last_name │ owner_id  │
      │ con_t37cvuyg6nmrxe │ linus.torvalds27@… │ Linus      │ Torvalds  │ usr_user  │
      │ con_9umwvc3m8ha9pi │ john.backus9@exam… │ John       │ Backus    │ usr_admin │
      │ con_qn1mlukelel74p │ radia.turing22@ex… │ Radia      │ Turing    │ usr_admin │
      └────────────────────┴────────────────────┴────────────┴───────────┴───────────┘
      --- stderr
      Table fitted to 80 columns: hidden company_id; cut email. To see everything: --wide, --fields id,company_id or -o json.
      More results: crm links list segments seg_shv91kwintnogd members --limit 3 --cursor <cursor> (or --all for every page)
      "
    `);
  });
  it('v1', async () => {
    expect(await table(['v1', 'people', 'query', '--limit', '2'])).toMatchInlineSnapshot(`
      "┌────────────────────┬──────────────────────┬───────────┬──────────┬───────────┐
      │ id                 │ email                │ firstName │ lastName │ owner     │
      │ con_iorztmuulcgvoc │ ada.lovelace0@examp… │ Ada       │ Lovelace │ usr_admin │
      │ con_5d03nqyvgp5951 │ grace.thompson1@exa… │ Grace     │ Thompson │ usr_admin │
      └────────────────────┴──────────────────────┴───────────┴──────────┴───────────┘
      --- stderr
      Notice: the version 1 API is deprecated; use 'crm contacts list' (version 1 people are version 2 contacts) instead.
      Table fitted to 80 columns: hidden companyId; cut email. To see everything: --wide, --fields id,companyId or -o json.
      More results: crm v1 people query --limit 2 --cursor <cursor> (or --all)
      "
    `);
    expect(await table(['v1', 'interactions', 'query', '--limit', '2'])).toMatchInlineSnapshot(`
      "┌────────────────────┬──────┬───────────┬───────────────┬──────────────────────┐
      │ id                 │ type │ direction │ title         │ interactionDate      │
      │ int_e6qtooimjj374b │ call │ outbound  │ Interaction 1 │ 2026-01-05T09:00:00… │
      │ int_oguv4xyu7hbhoi │ call │ inbound   │ Interaction 2 │ 2026-01-05T10:00:00… │
      └────────────────────┴──────┴───────────┴───────────────┴──────────────────────┘
      --- stderr
      Notice: the version 1 API is deprecated; use 'crm interactions list' instead.
      Table fitted to 80 columns: hidden as empty in every row createdBy; cut interactionDate. To see everything: --wide or -o json.
      "
    `);
  });
  it('keys', async () => {
    await table(['keys', 'add', 'work', '--base-url', 'https://crm.example.com/api/v2'], `${t.sb.keys.readonly}\n`);
    expect(await table(['keys', 'list'])).toMatchInlineSnapshot(`
      "┌─────────┬────────────────────────────────┬────────────────────┬─────────┐
      │ profile │ base_url                       │ api_key            │ default │
      │ work    │ https://crm.example.com/api/v2 │ service_live_…4y9w │ *       │
      └─────────┴────────────────────────────────┴────────────────────┴─────────┘
      --- stderr
      Table fitted to 80 columns: hidden auth_header, v1_base_url; hidden as empty in every row v1_api_key. To see everything: --wide, --fields profile,auth_header,v1_base_url or -o json.
      "
    `);
  });
  it('keys-check', async () => {
    const text = await table(['keys-check']);
    expect(text.replace(/\d+(?= of \d+ left)/, (n) => 'N'.repeat(n.length))).toMatchInlineSnapshot(`
      "┌───────────────────┬──────────────────────────────────────────────────────────┐
      │ profile           │ (environment)                                            │
      │ base_url          │ http://127.0.0.1:PPPPP/api/v2                            │
      │ key               │ service_live_…0iyh (version 2)                           │
      │ authenticated     │ yes                                                      │
      │ contacts:read     │ yes                                                      │
      │ companies:read    │ yes                                                      │
      │ deals:read        │ yes                                                      │
      │ pipelines:read    │ yes                                                      │
      │ tasks:read        │ yes                                                      │
      │ notes:read        │ yes                                                      │
      │ segments:read     │ yes                                                      │
      │ interactions:read │ yes                                                      │
      │ meetings:read     │ yes                                                      │
      │ recordings:read   │ yes                                                      │
      │ bookings:read     │ yes                                                      │
      │ not_checked       │ contacts:write, contacts:delete, companies:write,        │
      │                   │ companies:delete, deals:write, deals:delete,             │
      │                   │ pipelines:write, pipelines:delete, tasks:write,          │
      │                   │ tasks:delete, notes:write, notes:delete, segments:write, │
      │                   │ segments:delete, interactions:write, meetings:write      │
      │ note              │ Only read scopes were checked (GET ?limit=1). Write and  │
      │                   │ delete scopes cannot be checked without creating or      │
      │                   │ deleting data: the first write tells (exit 4 when the    │
      │                   │ scope is missing).                                       │
      │ rate_limit        │ NNNNNN of 1000000 left, resets in 60 s                   │
      └───────────────────┴──────────────────────────────────────────────────────────┘
      "
    `);
  });
});
