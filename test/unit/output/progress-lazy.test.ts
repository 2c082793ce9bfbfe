import { describe, expect, it, vi } from 'vitest';
import stringWidth from 'string-width';
import { createProgress } from '../../../src/output/progress.js';
import { fakeStdout } from '../../helpers/fake-io.js';

const loaded = vi.hoisted(() => ({ count: 0 }));
vi.mock('ora', () => {
  loaded.count++;
  const spinner = {
    text: '',
    start: () => spinner,
    stop: () => spinner,
  };
  return { default: vi.fn(() => spinner) };
});

describe('createProgress loads ora lazily', () => {
  it('does not load ora when disabled, or when enabled but never shown', async () => {
    const a = createProgress({ stream: fakeStdout(), enabled: false });
    a.update('x');
    await a.stop();
    const b = createProgress({ stream: fakeStdout({ isTTY: true }), enabled: true });
    await b.stop();
    expect(loaded.count).toBe(0);
  });

  it('loads ora on the first update and passes stderr with stdin left alone', async () => {
    const stderr = fakeStdout({ isTTY: true });
    const p = createProgress({ stream: stderr, enabled: true });
    p.update('working');
    await p.stop();
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
    await p.stop();
    expect(loaded.count).toBe(before);
  });
});

describe('createProgress on an 80-column terminal', () => {
  const ora = async () =>
    (await import('ora')).default as unknown as ReturnType<typeof vi.fn> & { mock: { results: Array<{ value: any }> } };

  it('keeps the line within the row (display width, wide characters too), read at each update', async () => {
    const stderr = fakeStdout({ isTTY: true, columns: 80 });
    const long = `${'進捗 '.repeat(30)}· ETA 5s`;
    const p = createProgress({ stream: stderr, enabled: true, text: long });
    p.update(long);
    await new Promise((r) => setTimeout(r, 0)); // ora loaded
    const o = await ora();
    const first = (o.mock.calls.at(-1) as [{ text: string }])[0].text;
    expect(stringWidth(first)).toBeLessThanOrEqual(77); // spinner, space, one spare column
    expect(first).toMatch(/^進捗 .*…$/);
    const spinner = o.mock.results.at(-1)!.value;
    stderr.columns = 40;
    p.update(long);
    expect(stringWidth(spinner.text)).toBeLessThanOrEqual(37);
    p.update('short');
    expect(spinner.text).toBe('short');
    await p.stop();
  });

  it('colours nothing unless told to: ora gets color false', async () => {
    const p = createProgress({ stream: fakeStdout({ isTTY: true }), enabled: true });
    p.update('working');
    await p.stop();
    const o = await ora();
    expect(o).toHaveBeenLastCalledWith(expect.objectContaining({ color: false }));

    const c = createProgress({ stream: fakeStdout({ isTTY: true }), enabled: true, color: true });
    c.update('working');
    await c.stop();
    expect(o).toHaveBeenLastCalledWith(expect.objectContaining({ color: 'cyan' }));
  });
});
