// A restore resuming a create file whose job an interrupted run finished never passes on the engine's hint to import it
// again with --no-resume (pasted, it would create every record a second time).
import { describe, expect, it } from 'vitest';
import { restated } from '../../../../src/commands/restore/restore-step.js';

describe('restated', () => {
  it('says a finished create file is done, not how to import it again', () => {
    const engine =
      'x.create.ndjson was already imported into contacts (2026-11-30T01:09:02.947Z): nothing will be sent; use --no-resume to import it again';
    expect(restated(engine, 'contacts')).not.toContain('--no-resume');
    expect(restated(engine, 'contacts')).toContain('their ids go to the id map');
    expect(restated('another notice', 'contacts')).toBe('another notice');
  });
});
