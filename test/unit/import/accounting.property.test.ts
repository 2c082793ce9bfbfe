// Every summary accounts for every row (issue 17): whatever the file (invalid rows, rows repeating an
// earlier one), the faults (500 before or after the write, a chunk refused with a 4xx, a 401 that stops the
// run) and a Ctrl-C at any moment, rows = created + failed + invalid + skipped + not_sent, every row a request
// carried is created or failed, not_sent is the rows the run did not reach, and the reasons' counts add up to failed + invalid.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AuthError, ValidationError } from '../../../src/http/errors.js';
import { importSummaryOf, runImport, type ImportSummary } from '../../../src/import/engine.js';
import { runs } from '../../helpers/property.js';
import { fakeServer, type Fault } from './fake-server.js';
import { tempDir } from './helpers.js';

type RowKind = 'ok' | 'bad-email' | 'invalid' | 'repeat';
type FaultKind = 'none' | 'before' | 'after' | 'refused' | 'auth';

const row = (kind: RowKind, i: number): string =>
  kind === 'ok'
    ? `u${i}@x.io,${i}`
    : kind === 'bad-email'
      ? `nobody-${i},${i}`
      : kind === 'invalid'
        ? `u${i}@x.io,x`
        : 'same@x.io,0';

const sum = (s: ImportSummary): number => s.created + s.failed + s.invalid + s.skipped + s.not_sent;

describe('import accounting', () => {
  it('the parts of every summary add up to the rows; not_sent is what no request carried', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<RowKind>('ok', 'ok', 'ok', 'bad-email', 'invalid', 'repeat'), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.array(fc.constantFrom<FaultKind>('none', 'none', 'none', 'before', 'after', 'refused', 'auth'), {
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 3 }),
        fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
        async (kinds, faults, chunkSize, concurrency, abortAfter) => {
          const dir = tempDir();
          const input = join(dir, 'in.csv');
          writeFileSync(input, `email,n:number\n${kinds.map(row).join('\n')}\n`);
          const server = fakeServer();
          const ac = new AbortController();
          const refused = new Set<number>();
          server.fault = (req, n): Fault | Error => {
            if (abortAfter !== undefined && n >= abortAfter) ac.abort();
            const f = faults[n - 1] ?? 'none';
            if (f === 'refused')
              return new ValidationError('refused whole', { status: 422, code: 'VALIDATION_FAILED' });
            if (f === 'auth') {
              refused.add(req.seq);
              return new AuthError('bad key', { status: 401 });
            }
            return f === 'none' ? undefined : f;
          };
          let t = 0;
          const deps = {
            send: server.send,
            journalDir: join(dir, 'j'),
            clock: { now: () => (t += 1) },
            cwd: dir,
            signal: ac.signal,
          };
          let stopped = false;
          const s = await runImport(
            { resource: 'contacts', input, baseUrl: 'http://x/api/v2', chunkSize, concurrency },
            deps,
          ).catch((err: unknown) => {
            stopped = true;
            return importSummaryOf(err) ?? Promise.reject(err);
          });
          expect(s.rows).toBe(kinds.length);
          expect(sum(s)).toBe(s.rows);
          // rows carried by a request that was not refused before it was carried out (a 401)
          const carried = server.calls.filter((c) => !refused.has(c.seq)).reduce((n, c) => n + c.records.length, 0);
          const repeated = kinds.filter((k, i) => k === 'repeat' && kinds.indexOf('repeat') < i).length;
          const invalid = kinds.filter((k) => k === 'invalid').length;
          // every row a request carried is created or failed (in doubt among them); repeats are skipped
          expect(s.created + s.failed).toBe(carried);
          expect(s.skipped).toBe(repeated);
          // the rest is invalid or not reached; a run that was not stopped reached every row
          expect(s.not_sent).toBe(kinds.length - carried - repeated - s.invalid);
          if (!stopped) expect([s.not_sent, s.invalid]).toEqual([0, invalid]);
          expect(s.reasons.reduce((n, r) => n + r.count, 0)).toBe(s.failed + s.invalid);
        },
      ),
      runs(60),
    );
  });
});
