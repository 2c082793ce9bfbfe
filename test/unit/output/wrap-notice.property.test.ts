// wrapNotice (issue 17): notices on a terminal's stderr wrapped at spaces, never inside a word, a
// `quoted span` or a `crm …` command; indented lines (commands to copy) left whole.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayWidth, forStderr, noticeUnits, wrapNotice } from '../../../src/output/width.js';
import { runs } from '../../helpers/property.js';

const word = fc.stringMatching(/^[a-zA-Z0-9.,:;…-]{1,30}$/).filter((w) => w !== 'crm');
const words = (line: string) => line.split(/\s+/).filter((w) => w !== '');

describe('wrapNotice', () => {
  it('keeps every word whole and in order; a line is over the width only when it is one unbreakable unit', () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 60 }), fc.integer({ min: 10, max: 120 }), (ws, max) => {
        const text = ws.join(' ');
        const out = wrapNotice(text, max).split('\n');
        expect(out.flatMap(words)).toEqual(ws);
        for (const line of out) if (displayWidth(line) > max) expect(noticeUnits(line)).toHaveLength(1);
      }),
      runs(),
    );
  });

  // the tokens a new user saw split at 80 columns: a host name, a backticked command, a flag and its value
  const tokens = [
    'crm.example.com',
    'host not found: crm.example.com',
    '`crm keys-check`',
    '(`crm batch contacts big.csv.rejects.csv`)',
    '--encoding windows-1252',
    '-o json',
    '--fields id,email',
    'crm contacts list --limit 2',
    // issue 29's trial: a hint's --map split inside its quotes, so the pasted half failed
    '--map "E-mail Address=email"',
    '"First Name"',
  ];
  it('joining the lines with spaces gives the text back; no host name, backticked span, flag and value or crm command is split', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(word, fc.constantFrom(...tokens)), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 5, max: 100 }),
        (parts, max) => {
          const text = parts.join(' ');
          const lines = wrapNotice(text, max).split('\n');
          expect(lines.join(' ')).toBe(text);
          for (const line of lines) expect(line).toBe(line.trim());
          for (const line of lines) if (displayWidth(line) > max) expect(noticeUnits(line)).toHaveLength(1);
          // every token in the text sits whole on one line
          const joinedByLine = lines.map((l) => ` ${l} `);
          for (const token of tokens.filter((tk) => ` ${text} `.includes(` ${tk} `)))
            if (!token.startsWith('crm ') && !token.startsWith('host'))
              expect(
                joinedByLine.some((l) => l.includes(token)),
                `${token} in\n${lines.join('\n')}`,
              ).toBe(true);
        },
      ),
      runs(),
    );
  });

  it('the trial at 80 columns: host name, backticked command, flag values whole', () => {
    const text =
      'Error: host not found: crm.example.com (check the base URL) — run `crm keys-check` and then import again with --encoding windows-1252 or ask for -o json output, please';
    for (const max of [20, 25, 30, 35, 40, 80]) {
      const lines = wrapNotice(text, max).split('\n');
      for (const whole of ['crm.example.com', '`crm keys-check`', '--encoding windows-1252', '-o json'])
        expect(
          lines.some((l) => l.includes(whole)),
          `${max}: ${whole}\n${lines.join('\n')}`,
        ).toBe(true);
    }
  });

  it('the 179-column table notice at 80: lines of at most 80 columns', () => {
    const notice =
      'Table fitted to 80 columns: hidden first_name, last_name, company_id, owner_id, title, phone, created_at, updated_at; cut email. To see them: --wide, --fields id,email,first_name,… or -o json.';
    const out = wrapNotice(notice, 80);
    expect(out.split('\n').every((l) => displayWidth(l) <= 80)).toBe(true);
    expect(words(out)).toEqual(words(notice));
  });

  it('a crm command and a backticked span stay on one line; indented lines are left whole', () => {
    const cmd = 'crm contacts list --limit 2 --cursor eyJvZmZzZXQiOjJ9';
    const out = wrapNotice(`More results: ${cmd} (or --all for every page)`, 40).split('\n');
    expect(out).toContain(cmd);
    const ticked = wrapNotice('fix the rows, then run `crm batch contacts people.csv.rejects.csv` again', 30).split(
      '\n',
    );
    expect(ticked).toContain('`crm batch contacts people.csv.rejects.csv`');
    const indented = `Try:\n  ${'X=1 '.repeat(30)}crm contacts list`;
    expect(wrapNotice(indented, 40)).toBe(indented);
    const command = `Then:\n  crm batch contacts ${'long-name-'.repeat(5)}.csv --update`;
    expect(wrapNotice(command, 40)).toBe(command);
  });

  it("another indented line (a plan's row, a warning's item) wraps at spaces, two columns further in (trial: cut mid-word at 80)", () => {
    const row = `  update            39  ${['first_name', 'last_name', 'title', 'phone', 'department_name_full', 'linkedin_profile_url'].map((f) => `${f} 39`).join(', ')}`;
    const out = wrapNotice(row, 80).split('\n');
    expect(out.length).toBeGreaterThan(1);
    for (const l of out) expect(displayWidth(l)).toBeLessThanOrEqual(80);
    expect(out.slice(1).every((l) => l.startsWith('    ') && !l.startsWith('     '))).toBe(true);
    expect(out.map((l) => l.trim()).join(' ')).toBe(row.trim());
  });

  it('forStderr wraps only on a terminal', () => {
    const long = 'word '.repeat(30).trim();
    expect(forStderr({ isTTY: false, columns: 40 }, long)).toBe(long);
    expect(forStderr({}, long)).toBe(long);
    expect(forStderr({ isTTY: true, columns: 40 }, long).split('\n').length).toBeGreaterThan(1);
  });
});
