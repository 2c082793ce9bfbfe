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
    await p.stop();
    expect(stderr.text()).toBe('');
  });

  it('shows a spinner on the given stream with sanitised text', async () => {
    const stderr = fakeTty();
    const stdout = fakeStdout({ isTTY: true });
    const p = createProgress({ stream: stderr, enabled: true });
    p.update('rows read: 10');
    p.update('rows read: 20 \x1b[2J \x1b]8;;x\x07');
    await p.stop();
    const text = stderr.text();
    expect(text).toContain('rows read');
    expect(text).not.toContain('\x1b[2J');
    expect(text).not.toContain('\x1b]8');
    expect(stdout.text()).toBe('');
  });

  it('stop ends it; later calls do nothing', async () => {
    const stderr = fakeTty();
    const p = createProgress({ stream: stderr, enabled: true, text: 'starting' });
    p.update('half way');
    await p.stop();
    const after = stderr.text();
    expect(after).toContain('half way');
    p.update('ignored');
    await p.stop();
    expect(stderr.text()).toBe(after);
  });

  it('stop before anything was shown writes nothing', async () => {
    const stderr = fakeStdout({ isTTY: true });
    const p = createProgress({ stream: stderr, enabled: true });
    await p.stop();
    expect(stderr.text()).toBe('');
  });
});
