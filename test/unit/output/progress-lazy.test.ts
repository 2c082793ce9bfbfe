import { describe, expect, it, vi } from 'vitest';
import { createProgress } from '../../../src/output/progress.js';
import { fakeStdout } from './helpers.js';

const loaded = vi.hoisted(() => ({ count: 0 }));
vi.mock('ora', () => {
  loaded.count++;
  const spinner = { text: '', start: () => spinner, stop: () => spinner, succeed: () => spinner, fail: () => spinner };
  return { default: vi.fn(() => spinner) };
});

describe('createProgress loads ora lazily', () => {
  it('does not load ora when disabled, or when enabled but never shown', async () => {
    const a = createProgress({ stream: fakeStdout(), enabled: false });
    a.update('x');
    await a.succeed('y');
    const b = createProgress({ stream: fakeStdout({ isTTY: true }), enabled: true });
    await b.stop();
    expect(loaded.count).toBe(0);
  });

  it('loads ora on the first update and passes stderr with stdin left alone', async () => {
    const stderr = fakeStdout({ isTTY: true });
    const p = createProgress({ stream: stderr, enabled: true });
    p.update('working');
    await p.succeed();
    expect(loaded.count).toBe(1);
    const ora = (await import('ora')).default as unknown as ReturnType<typeof vi.fn>;
    expect(ora).toHaveBeenCalledWith(expect.objectContaining({ stream: stderr, discardStdin: false, text: 'working' }));
  });
});

describe('createProgress on a terminal that cannot redraw', () => {
  it('shows nothing when the terminal reports no width (ora would loop for ever)', async () => {
    const before = loaded.count;
    const p = createProgress({ stream: fakeStdout({ isTTY: true, columns: 0 }), enabled: true });
    expect(p.enabled).toBe(false);
    p.update('x');
    await p.succeed();
    expect(loaded.count).toBe(before);
  });
});
