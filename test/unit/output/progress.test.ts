import { afterEach, describe, expect, it, vi } from 'vitest';
import { createProgress } from '../../../src/output/progress.js';
import { fakeStdout, fakeTty } from '../../helpers/fake-io.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createProgress', () => {
  it('is a silent no-op when disabled', async () => {
    const stderr = fakeStdout({ isTTY: false });
    const p = createProgress({ stream: stderr, enabled: false });
    expect(p.enabled).toBe(false);
    p.update('working');
    await p.succeed('done');
    await p.fail('failed');
    await p.stop();
    expect(stderr.text()).toBe('');
  });

  it('shows a spinner on the given stream and ends with ✔ and sanitised text', async () => {
    const stderr = fakeTty();
    const stdout = fakeStdout({ isTTY: true });
    const p = createProgress({ stream: stderr, enabled: true });
    p.update('rows read: 10');
    p.update('rows read: 20 \x1b[2J');
    await p.succeed('imported 20 rows \x1b]8;;x\x07');
    const text = stderr.text();
    expect(text).toContain('imported 20 rows \\x1b]8;;x\\x07');
    expect(text).toContain('✔');
    expect(text).not.toContain('\x1b[2J');
    expect(text).not.toContain('\x1b]8');
    expect(stdout.text()).toBe('');
  });

  it('fail ends with ✖; later calls do nothing', async () => {
    const stderr = fakeTty();
    const p = createProgress({ stream: stderr, enabled: true, text: 'starting' });
    p.update('half way');
    await p.fail();
    const after = stderr.text();
    expect(after).toContain('✖');
    expect(after).toContain('half way');
    p.update('ignored');
    await p.succeed('ignored too');
    expect(stderr.text()).toBe(after);
  });

  it('stop before anything was shown writes nothing', async () => {
    const stderr = fakeStdout({ isTTY: true });
    const p = createProgress({ stream: stderr, enabled: true });
    await p.stop();
    expect(stderr.text()).toBe('');
  });
});
