// Display width: CJK and emoji take two terminal columns; cuts and wraps never split a grapheme.
import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { cutToWidth, displayWidth, wrapToWidth } from '../../../src/output/width.js';
import { runs } from '../../helpers/property.js';

const textArb = fc
  .array(fc.constantFrom('a', 'b', ' ', 'x', '東', '京', '😀', '👩‍💻', '👍🏽', 'é', 'e\u0301', '-', '/'), { maxLength: 80 })
  .map((p) => p.join(''));
const graphemes = (s: string) =>
  Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(s), (x) => x.segment);

describe('displayWidth', () => {
  it('counts terminal columns, not characters', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('東京')).toBe(4);
    expect(displayWidth('😀')).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
    expect(displayWidth('ab\n東京都')).toBe(6);
  });
});

describe('cutToWidth', () => {
  it('cuts to the width with …, between graphemes', () => {
    expect(cutToWidth('東京都庁舎', 6)).toBe('東京…');
    expect(cutToWidth('😀😀😀😀', 5)).toBe('😀😀…');
    expect(cutToWidth('👩‍💻👩‍💻👩‍💻', 4)).toBe('👩‍💻…');
    expect(cutToWidth('short', 10)).toBe('short');
    expect(cutToWidth('anything', 0)).toBe('anything');
  });

  it('property: never wider than asked, a prefix of whole graphemes', () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 1, max: 40 }), (text, max) => {
        const cut = cutToWidth(text, max);
        expect(stringWidth(cut)).toBeLessThanOrEqual(max);
        if (cut === text) return;
        const kept = graphemes(cut.slice(0, -1));
        expect(graphemes(text).slice(0, kept.length)).toEqual(kept);
      }),
      runs(),
    );
  });
});

describe('wrapToWidth', () => {
  it('wraps at spaces, breaks only words longer than a line', () => {
    expect(wrapToWidth('aaa bbb ccc', 7)).toEqual({ lines: ['aaa bbb', 'ccc'], broken: false });
    expect(wrapToWidth('東京 東京都庁', 8)).toEqual({ lines: ['東京', '東京都庁'], broken: false });
    expect(wrapToWidth('x https://example.com/abcdef y', 10)).toEqual({
      lines: ['x', 'https://ex', 'ample.com/', 'abcdef y'],
      broken: true,
    });
  });

  it('{ long: "whole" }: a word longer than a line (a URL) goes whole on its own line, never cut (new-user trial at 80 columns)', () => {
    expect(wrapToWidth('x https://example.com/abcdef y', 10, { long: 'whole' })).toEqual({
      lines: ['x', 'https://example.com/abcdef', 'y'],
      broken: false,
    });
    expect(wrapToWidth('see https://example.com/a-long-page.', 10, { long: 'whole' }).lines).toEqual([
      'see',
      'https://example.com/a-long-page.',
    ]);
  });

  it('property { long: "whole" }: every line fits or is one word, every word is whole and in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z:/.]{1,40}$/), { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 2, max: 30 }),
        (words, max) => {
          const { lines, broken } = wrapToWidth(words.join(' '), max, { long: 'whole' });
          expect(broken).toBe(false);
          for (const line of lines) if (line.includes(' ')) expect(stringWidth(line)).toBeLessThanOrEqual(max);
          expect(lines.join(' ').split(' ')).toEqual(words);
        },
      ),
      runs(),
    );
  });

  it('property: every line fits, and the lines hold all the text (only breaking spaces dropped)', () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 2, max: 30 }), (text, max) => {
        const { lines } = wrapToWidth(text, max);
        for (const line of lines) expect(stringWidth(line)).toBeLessThanOrEqual(max);
        expect(lines.join('').replace(/\s/g, '')).toBe(text.replace(/\s/g, ''));
      }),
      runs(),
    );
  });
});
