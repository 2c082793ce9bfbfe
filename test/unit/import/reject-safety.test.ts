// The columns crm fills from the server's answers (never imported back) are safe to open in a
// spreadsheet and to cat; the next-step hint after a partial import names one safe path per kind.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runs } from '../../helpers/property.js';
import { RAW_UNSAFE } from '../../helpers/unsafe.js';
import { nextSteps } from '../../../src/commands/batch/run.js';
import { serverCell } from '../../../src/import/files/outputs.js';
import { unknownPathFor } from '../../../src/import/plan.js';
import type { ImportSummary } from '../../../src/import/engine.js';

describe('serverCell', () => {
  it('never holds a control character, and never starts like a formula', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const out = serverCell(s);
        expect(out).not.toMatch(RAW_UNSAFE);
        expect(out).not.toMatch(/^[=+\-@\uff1d\uff0b\uff0d\uff20]/);
      }),
      runs(100),
    );
  });

  it('leaves plain text alone, guards formulas, escapes ESC/OSC/C1/bidi', () => {
    expect(serverCell('VALIDATION_FAILED')).toBe('VALIDATION_FAILED');
    expect(serverCell('=HYPERLINK("x")')).toBe(`'=HYPERLINK("x")`);
    expect(serverCell('a\u001b]8;;u\u0007b\u009b\u202e')).toBe('a\\x1b]8;;u\\x07b\\x9b\\u202e');
  });
});

describe('unknownPathFor', () => {
  it('sits beside the rejects file', () => {
    expect(unknownPathFor('people.csv.rejects.csv')).toBe('people.csv.unknown.csv');
    expect(unknownPathFor('in.ndjson.rejects.ndjson')).toBe('in.ndjson.unknown.ndjson');
    expect(unknownPathFor('/tmp/out.csv')).toBe('/tmp/out.unknown.csv');
    expect(unknownPathFor('/a.b/out')).toBe('/a.b/out.unknown');
  });
});

describe('nextSteps', () => {
  const base: ImportSummary = {
    resource: 'contacts',
    rows: 30,
    created: 19,
    failed: 10,
    invalid: 1,
    skipped: 0,
    chunks: 3,
    requests: 3,
    retries: 0,
    elapsed_ms: 1,
    rejects_file: 'my file.csv.rejects.csv',
    in_doubt: 10,
    unknown: 0,
    unknown_file: null,
    not_sent: 0,
    reasons: [],
  };

  it('rejects: the exact command, the path as one shell word', () => {
    const text = nextSteps({ ...base, failed: 0, in_doubt: 0 }, false);
    expect(text).toBe(
      "1 row was not created and is in my file.csv.rejects.csv: fix it there and run `crm batch contacts 'my file.csv.rejects.csv'`.",
    );
  });

  it('rows in doubt: the rerun first and only; the rejects file is handed out by a run with nothing in doubt', () => {
    const text = nextSteps(base, false);
    expect(text).toMatch(
      /^10 rows were sent without an answer and may have been created: first rerun this same command/,
    );
    expect(text).not.toMatch(/crm batch|rejects/);
  });

  it('rows in doubt only: no rejects instruction at all', () => {
    const text = nextSteps({ ...base, invalid: 0, rejects_file: null }, true);
    expect(text).not.toMatch(/crm batch/);
    expect(text).toMatch(/pipe the same content to this same command/);
  });

  it('rows the server said nothing about: checked first, from their own file', () => {
    const text = nextSteps(
      {
        ...base,
        failed: 2,
        in_doubt: 0,
        invalid: 0,
        unknown: 2,
        rejects_file: null,
        unknown_file: 'p.csv.unknown.csv',
      },
      false,
    );
    expect(text).toBe(
      "The server's answer did not say whether 2 rows were created: they are in p.csv.unknown.csv; check in the CRM which exist before importing any of them.",
    );
  });
});
