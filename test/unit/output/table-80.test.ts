// Whole tables as a person sees them on an 80-column terminal: CJK and emoji, ids never cut,
// hidden columns named on stderr, --wide, a `get` with long values, the links and keys views.
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { createListWriter, writeRecord, type WriterOptions } from '../../../src/output/writers.js';
import { fakeTty } from '../../helpers/fake-io.js';

const contacts = [
  {
    id: 'con_iorztmuulcgvoc',
    email: 'ada.lovelace0@example.com',
    first_name: 'Ada',
    last_name: 'Lovelace',
    company_id: 'cmp_ppa9c17zkz56ka',
    owner_id: 'usr_admin',
    phone: null,
  },
  {
    id: 'con_shkipzgx9ms6e2',
    email: '山田.太郎@例え.jp',
    first_name: '山田',
    last_name: '太郎🚀',
    company_id: 'cmp_iuwg5mt7ejzhuu',
    owner_id: 'usr_user',
    phone: null,
  },
  {
    id: 'con_d5jlolw39oo9p3',
    email: 'zoe@example.com',
    first_name: 'Zoë',
    last_name: '🎉👩‍💻🎉',
    company_id: null,
    owner_id: 'usr_admin',
    phone: null,
  },
];

async function table(
  records: unknown[],
  opts: WriterOptions = {},
  width = 80,
): Promise<{ out: string; notices: string[] }> {
  const tty = fakeTty(width);
  const notices: string[] = [];
  const w = createListWriter('table', tty, { color: false, notice: (m) => notices.push(m), ...opts });
  for (const r of records) await w.write(r);
  await w.end();
  return { out: tty.text(), notices };
}

const widest = (text: string) =>
  Math.max(
    ...text
      .trimEnd()
      .split('\n')
      .map((l) => stringWidth(l)),
  );

describe('a list at 80 columns', () => {
  it('keeps ids whole, hides the columns that do not fit, and says which and how to see them', async () => {
    const { out, notices } = await table(contacts, {
      columns: ['id', 'email', 'first_name', 'last_name', 'company_id', 'owner_id', 'phone'],
    });
    expect(out).toMatchInlineSnapshot(`
      "┌────────────────────┬────────────────────┬────────────┬───────────┬───────────┐
      │ id                 │ email              │ first_name │ last_name │ owner_id  │
      │ con_iorztmuulcgvoc │ ada.lovelace0@exa… │ Ada        │ Lovelace  │ usr_admin │
      │ con_shkipzgx9ms6e2 │ 山田.太郎@例え.jp  │ 山田       │ 太郎🚀    │ usr_user  │
      │ con_d5jlolw39oo9p3 │ zoe@example.com    │ Zoë        │ 🎉👩‍💻🎉    │ usr_admin │
      └────────────────────┴────────────────────┴────────────┴───────────┴───────────┘
      "
    `);
    expect(widest(out)).toBeLessThanOrEqual(80);
    for (const c of contacts) expect(out).toContain(c.id);
    expect(notices).toEqual([
      'Table fitted to 80 columns: hidden company_id; hidden as empty in every row phone; cut email. To see everything: --wide, --fields id,company_id or -o json.',
    ]);
  });

  it('CJK text is measured in terminal columns: the table is 80 wide, not 114', async () => {
    const rows = [
      {
        id: 'note_hop2uhn25ha12q',
        body: '東京の会議メモ：多言語のテキストが長く続きます。東京の会議メモ😀😀',
        owner_id: 'usr_admin',
      },
    ];
    const { out } = await table(rows);
    expect(out).toMatchInlineSnapshot(`
      "┌─────────────────────┬────────────────────────────────────────────┬───────────┐
      │ id                  │ body                                       │ owner_id  │
      │ note_hop2uhn25ha12q │ 東京の会議メモ：多言語のテキストが長く続…  │ usr_admin │
      └─────────────────────┴────────────────────────────────────────────┴───────────┘
      "
    `);
    expect(
      new Set(
        out
          .trimEnd()
          .split('\n')
          .map((l) => stringWidth(l)),
      ),
    ).toEqual(new Set([80]));
  });

  it('--wide shows every column uncut and says nothing', async () => {
    const { out, notices } = await table(contacts, {
      wide: true,
      columns: ['id', 'email', 'first_name', 'last_name', 'company_id', 'owner_id', 'phone'],
    });
    expect(out).toContain('ada.lovelace0@example.com');
    expect(out).toContain('cmp_ppa9c17zkz56ka');
    expect(out.split('\n')[1]).toContain('phone');
    expect(widest(out)).toBeGreaterThan(80);
    expect(notices).toEqual([]);
  });

  it('a table that fits is left alone, empty columns included, with no notice', async () => {
    const { out, notices } = await table([{ id: 'con_1', email: '東京@例え.jp', phone: null }]);
    expect(out.split('\n')[1]).toBe('│ id    │ email        │ phone │');
    expect(notices).toEqual([]);
  });

  it('links list: the linked id, its role and supervisor come first', async () => {
    const linked = [
      { ...contacts[0], link: { id: 'lnk_8yzpybbe2set15', type: 'DECISION_MAKER', supervisor: 'con_ca2mjlnl2vomft' } },
    ];
    const columns = [
      'id',
      'link.type',
      'link.supervisor',
      'email',
      'first_name',
      'last_name',
      'company_id',
      'owner_id',
    ];
    const { out, notices } = await table(linked, { columns, whole: ['link.supervisor'] });
    expect(out).toMatchInlineSnapshot(`
      "┌────────────────────┬────────────────┬────────────────────┬───────────────────┐
      │ id                 │ link.type      │ link.supervisor    │ email             │
      │ con_iorztmuulcgvoc │ DECISION_MAKER │ con_ca2mjlnl2vomft │ ada.lovelace0@ex… │
      └────────────────────┴────────────────┴────────────────────┴───────────────────┘
      "
    `);
    expect(notices[0]).toMatch(/hidden first_name, last_name, company_id, owner_id; cut email/);
  });

  it('keys list: profile, base URL and masked key whole', async () => {
    const rows = [
      {
        profile: 'work',
        base_url: 'http://127.0.0.1:4010/api/v2',
        api_key: 'service_live_…0iyh',
        default: '*',
        auth_header: 'x-api-key',
        v1_api_key: '',
        v1_base_url: 'http://127.0.0.1:4010/api/v1',
      },
    ];
    const { out } = await table(rows, {
      pinned: ['profile'],
      whole: ['base_url', 'api_key', 'v1_api_key', 'v1_base_url'],
    });
    expect(out).toMatchInlineSnapshot(`
      "┌─────────┬──────────────────────────────┬────────────────────┬─────────┐
      │ profile │ base_url                     │ api_key            │ default │
      │ work    │ http://127.0.0.1:4010/api/v2 │ service_live_…0iyh │ *       │
      └─────────┴──────────────────────────────┴────────────────────┴─────────┘
      "
    `);
  });

  it('later chunks of a long list show the same columns as the first', async () => {
    const rows = [contacts[0], { ...contacts[1], email: 'short@x.jp' }];
    const { out } = await table(rows, { tableChunkSize: 1, columns: ['id', 'email', 'company_id', 'owner_id'] }, 60);
    const headers = out.split('\n').filter((l) => l.includes('│ id'));
    expect(headers).toHaveLength(2);
    expect(headers[0]!.replace(/ +/g, ' ')).toBe(headers[1]!.replace(/ +/g, ' '));
  });
});

describe('get at 80 columns', () => {
  const note = {
    id: 'note_hop2uhn25ha12q',
    body: `Meeting notes: https://example.com/${'x'.repeat(90)} 東京の会議メモ😀 多言語のテキストが長く続きます。`,
    owner_id: 'usr_admin',
  };

  it('wraps long values whole (never cut) and says which were broken', async () => {
    const tty = fakeTty(80);
    const notices: string[] = [];
    await writeRecord('table', tty, note, { color: false, notice: (m) => notices.push(m) });
    const out = tty.text();
    expect(out).toMatchInlineSnapshot(`
      "┌──────────┬───────────────────────────────────────────────────────────────────┐
      │ id       │ note_hop2uhn25ha12q                                               │
      │ body     │ Meeting notes:                                                    │
      │          │ https://example.com/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx │
      │          │ xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx 東京の会議メモ😀    │
      │          │ 多言語のテキストが長く続きます。                                  │
      │ owner_id │ usr_admin                                                         │
      └──────────┴───────────────────────────────────────────────────────────────────┘
      "
    `);
    expect(out).not.toContain('…');
    expect(out.replace(/[│\s]/g, '')).toContain(note.body.replace(/\s/g, ''));
    expect(notices).toEqual([
      'Long values broken across lines to fit 80 columns: body. To see them whole: --wide or -o json.',
    ]);
  });

  it('--wide prints each value on one line', async () => {
    const tty = fakeTty(80);
    const notices: string[] = [];
    await writeRecord('table', tty, note, { color: false, wide: true, notice: (m) => notices.push(m) });
    expect(tty.text()).toContain(note.body);
    expect(notices).toEqual([]);
  });
});
