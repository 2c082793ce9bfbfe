// The end of a batch summary: why rows failed (the top three groups) and one sentence of what happened.
import { describe, expect, it } from 'vitest';
import { outcomeSentence, reasonLines } from '../../../../src/commands/batch/outcome.js';
import { updateOperation, type ImportSummary } from '../../../../src/import/index.js';

const base: ImportSummary = {
  ...{ resource: 'contacts', rows: 1740, created: 1740, failed: 0, invalid: 0, skipped: 0, chunks: 18, requests: 18, retries: 0 },
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
    expect(outcomeSentence({ ...base, created: 0, skipped: 1740 })).toBe('Created 0 of 1,740 contacts; 1,740 created by an earlier run.');
    const s = { ...base, operation: updateOperation('deals'), resource: 'deals', rows: 10, created: 7, failed: 3, in_doubt: 2, invalid: 1 };
    expect(outcomeSentence({ ...s, rows: 11, rejects_file: 'd.rejects.csv' }, 'stopped')).toBe(
      'Stopped: updated 7 of 11 deals; 1 failed and 1 invalid (see d.rejects.csv); 2 sent without an answer (may have been updated).',
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
      '  and 7 rows for other reasons',
    ]);
    expect(reasonLines([])).toEqual([]);
  });
});
