// The end of a batch summary: why rows failed (the top three groups) and one sentence of what happened.
import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { outcomeSentence, reasonLines } from '../../../../src/commands/batch/outcome.js';
import { deleteOperation, updateOperation, type ImportSummary } from '../../../../src/import/index.js';
import { runs } from '../../../helpers/property.js';

const base: ImportSummary = {
  ...{
    resource: 'contacts',
    rows: 1740,
    created: 1740,
    failed: 0,
    invalid: 0,
    skipped: 0,
    chunks: 18,
    requests: 18,
    retries: 0,
  },
  ...{ elapsed_ms: 1, rejects_file: null, in_doubt: 0, unknown: 0, unknown_file: null, not_sent: 0, reasons: [] },
};

describe('outcomeSentence', () => {
  it('says what happened, every row accounted for', () => {
    expect(outcomeSentence(base)).toBe('Created 1,740 of 1,740 contacts.');
    expect(outcomeSentence({ ...base, created: 1700, failed: 40, rejects_file: 'm.csv.rejects.csv' })).toBe(
      'Created 1,700 of 1,740 contacts; 40 failed (see m.csv.rejects.csv).',
    );
    expect(outcomeSentence({ ...base, created: 1000, skipped: 3, repeated: 3, not_sent: 737 }, 'interrupted')).toBe(
      'Interrupted: created 1,000 of 1,740 contacts; 3 skipped as repeating an earlier row; 737 not sent yet.',
    );
    expect(outcomeSentence({ ...base, created: 0, skipped: 1740 })).toBe(
      'Created 0 of 1,740 contacts; 1,740 created by an earlier run.',
    );
    const s = {
      ...base,
      operation: updateOperation('deals'),
      resource: 'deals',
      rows: 10,
      created: 7,
      failed: 3,
      in_doubt: 2,
      invalid: 1,
    };
    expect(outcomeSentence({ ...s, rows: 11, rejects_file: 'd.rejects.csv' }, 'stopped')).toBe(
      'Stopped: updated 7 of 11 deals; 1 failed and 1 invalid (see d.rejects.csv); 2 sent without an answer (may have been updated).',
    );
  });
});

describe('outcomeSentence of a delete', () => {
  const del = { ...base, operation: deleteOperation('contacts'), backup_file: 'ids.csv.deleted.ndjson' };
  it('names the command that creates the deleted records again; one record is "it"', () => {
    const cmd = 'crm batch contacts ids.csv.deleted.ndjson';
    expect(outcomeSentence({ ...del, rows: 3, created: 3 }, undefined, cmd)).toBe(
      `Deleted 3 of 3 contacts; each kept first in ids.csv.deleted.ndjson (\`${cmd}\` creates them again, with new ids).`,
    );
    expect(outcomeSentence({ ...del, rows: 1, created: 1 }, undefined, cmd)).toBe(
      `Deleted 1 of 1 contact; kept first in ids.csv.deleted.ndjson (\`${cmd}\` creates it again, with new ids).`,
    );
  });
});

describe('reasonLines', () => {
  it('the three largest groups, aligned, then the rest in one line; server text made safe', () => {
    const lines = reasonLines([
      { code: 'VALIDATION_FAILED', message: 'email: required', count: 2115 },
      { code: 'VALIDATION_FAILED', message: 'email: invalid email', count: 40 },
      { code: 'INVALID_VALUE', message: 'column "n:number": "x" is not a number', count: 3 },
      { code: 'X', message: 'bell\u0007', count: 2 },
      { code: '(other)', message: '4 other reasons', count: 5 },
    ]);
    expect(lines).toEqual([
      'Why rows failed:',
      '  2,115 × VALIDATION_FAILED  email: required',
      '     40 × VALIDATION_FAILED  email: invalid email',
      '      3 × INVALID_VALUE  column "n:number": "x" is not a number',
      '  and 7 rows for other reasons (-o json lists them)',
    ]);
    expect(reasonLines([])).toEqual([]);
  });
});

describe('reasonLines on a terminal: a long reason wrapped, never cut off (new-user trial at 80 columns)', () => {
  const LONG =
    'email: the address is on the suppression list because an earlier message to it bounced permanently; remove it first';

  it('wraps it to the width, hanging under its first word', () => {
    expect(reasonLines([{ code: 'VALIDATION_FAILED', message: LONG, count: 2 }], 60)).toEqual([
      'Why rows failed:',
      '  2 × VALIDATION_FAILED  email: the address is on the',
      '                         suppression list because an earlier',
      '                         message to it bounced permanently;',
      '                         remove it first',
    ]);
  });

  it('a code too long to leave room beside it: the reason goes under it', () => {
    const code = 'A_VERY_LONG_ERROR_CODE_FROM_A_SERVER_THAT_NAMES_EVERYTHING';
    expect(reasonLines([{ code, message: 'short words, but not beside that code', count: 1 }], 80)).toEqual([
      'Why rows failed:',
      `  1 × ${code}`,
      '      short words, but not beside that code',
    ]);
  });

  it('one line each where it fits, and off a terminal (no width)', () => {
    const r = [{ code: 'X', message: LONG, count: 1 }];
    expect(reasonLines(r)).toEqual(['Why rows failed:', `  1 × X  ${LONG}`]);
    expect(reasonLines(r, 200)).toEqual(['Why rows failed:', `  1 × X  ${LONG}`]);
  });

  it('a URL longer than the room beside the code is never cut: it goes whole on its own line (new-user trial at 80 columns)', () => {
    const url = 'https://crm.example.com/docs/errors/validation#the-email-address-is-on-the-suppression-list';
    const lines = reasonLines(
      [{ code: 'VALIDATION_FAILED', message: `email: suppressed, see ${url} for why`, count: 3 }],
      80,
    );
    expect(lines).toContain(`                         ${url}`);
    expect(lines.join('\n')).toContain('for why');
  });

  it('the other reasons: says where every one of them is, in the same line (new-user trial)', () => {
    const four = ['a', 'b', 'c', 'd'].map((m, i) => ({
      code: 'VALIDATION_FAILED',
      message: `email: ${m}`,
      count: 100 - i,
    }));
    expect(reasonLines(four, 100, 'contacts.csv.rejects.csv').at(-1)).toBe(
      '  and 97 rows for other reasons (every row with its reason: contacts.csv.rejects.csv)',
    );
    expect(reasonLines(four, 80).at(-1)).toBe('  and 97 rows for other reasons (-o json lists them)');
    expect(reasonLines(four, undefined, 'c.rejects.csv').at(-1)).toBe(
      '  and 97 rows for other reasons (every row with its reason: c.rejects.csv)',
    );
    // wrapped at a space like a reason, the path whole
    const long = `a-folder-with-a-long-name/and-another-one-inside-it/contacts-${'x'.repeat(30)}.csv.rejects.csv`;
    const [first, second] = reasonLines(four, 80, long).slice(-2);
    expect(first).toBe('  and 97 rows for other reasons (every row with its reason:');
    expect(second).toBe(`    ${long})`);
  });

  it('a reason beyond 600 characters is cut saying so, and where to read it whole', () => {
    const [, line] = reasonLines([{ code: 'X', message: 'word '.repeat(300), count: 1 }]);
    expect(line).toMatch(/… \(900 more characters; -o json shows them all\)$/);
  });

  // review of c213ffd: the cut counts code points, so it may split a character a user sees as one
  // (a flag, a skin tone, an accent), and says "1 more characters"
  it('the cut at 600 never splits a character (grapheme), and counts in plain English', () => {
    const [, flags] = reasonLines([{ code: 'X', message: 'a' + '🇫🇷'.repeat(300), count: 1 }]);
    expect(flags).not.toMatch(/[\u{1f1e6}-\u{1f1ff}]…/u); // HEAD: "…🇫🇷🇫… (1 more characters; …)", a lone half of a flag
    const [, one] = reasonLines([{ code: 'X', message: 'a'.repeat(601), count: 1 }]);
    expect(one).toMatch(/… \(1 more character; -o json shows them all\)$/);
  });

  it('every line of the reason fits the terminal (the count and code too, when they fit) and every word is there, in order (property)', () => {
    const word = fc.stringMatching(/^[a-zA-Z0-9:;,.()>'-]{1,24}$/);
    const code = fc.tuple(fc.stringMatching(/^[A-Z_]{1,12}$/), fc.nat(70)).map(([c, k]) => c + 'X'.repeat(k));
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 60 }),
        code,
        fc.integer({ min: 40, max: 200 }),
        (words, code, columns) => {
          const message = words.join(' ');
          const lines = reasonLines([{ code, message, count: 12_345 }], columns).slice(1);
          const head = `  12,345 × ${code}`;
          expect(lines[0]!.startsWith(head)).toBe(true);
          for (const l of head.length <= columns ? lines : lines.slice(1))
            expect(stringWidth(l)).toBeLessThanOrEqual(columns);
          expect(lines.join(' ').replace(/\s+/g, '')).toBe((head + message).replace(/\s+/g, ''));
        },
      ),
      runs(),
    );
  });
});
