// wrapNotice (issue 17): notices on a terminal's stderr wrapped at spaces, never inside a word, a
// `quoted span` or a `crm …` command; indented lines (commands to copy) left whole.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayWidth, forStderr, wrapNotice } from '../../../src/output/width.js';
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
        for (const line of out) if (displayWidth(line) > max) expect(words(line)).toHaveLength(1);
      }),
      runs(),
    );
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
    const ticked = wrapNotice('fix the rows, then run `crm batch contacts people.csv.rejects.csv` again', 30).split('\n');
    expect(ticked).toContain('`crm batch contacts people.csv.rejects.csv`');
    const indented = `Try:\n  ${'X=1 '.repeat(30)}crm contacts list`;
    expect(wrapNotice(indented, 40)).toBe(indented);
  });

  it('forStderr wraps only on a terminal', () => {
    const long = 'word '.repeat(30).trim();
    expect(forStderr({ isTTY: false, columns: 40 }, long)).toBe(long);
    expect(forStderr({}, long)).toBe(long);
    expect(forStderr({ isTTY: true, columns: 40 }, long).split('\n').length).toBeGreaterThan(1);
  });
});
