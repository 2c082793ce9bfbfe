import { describe, expect, it } from 'vitest';
import { FaultInjector, parseFaultSpec, validateFaultRates } from '../../../src/sandbox/faults.js';
import { mulberry32 } from '../../../src/sandbox/random.js';

describe('parseFaultSpec', () => {
  it('parses kinds and probabilities', () => {
    expect(parseFaultSpec('500-after-write:0.05,drop:0.02')).toEqual({ '500-after-write': 0.05, drop: 0.02 });
    expect(parseFaultSpec(' html-502:1 ')).toEqual({ 'html-502': 1 });
    expect(parseFaultSpec('')).toEqual({});
    expect(parseFaultSpec('500:0,429:0.5,truncated:0.1,drop-after-write:0.1')).toEqual({
      '500': 0,
      '429': 0.5,
      truncated: 0.1,
      'drop-after-write': 0.1,
    });
  });

  it.each([
    ['boom:0.1', /unknown kind "boom"/],
    ['drop', /expected kind:probability/],
    ['drop:', /probability/],
    ['drop:1.5', /probability/],
    ['drop:-0.1', /probability/],
    ['drop:abc', /probability/],
    ['drop:0.1,drop:0.2', /given twice/],
    ['drop:0.6,500:0.6', /more than 1/],
  ])('refuses %s', (spec, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(message);
  });
});

describe('validateFaultRates', () => {
  it('accepts an object of kinds and refuses the rest', () => {
    expect(validateFaultRates({ '429': 0.5 })).toEqual({ '429': 0.5 });
    expect(() => validateFaultRates({ nope: 0.5 })).toThrow(/unknown kind "nope"/);
    expect(() => validateFaultRates({ drop: '0.5' })).toThrow(/probability/);
    expect(() => validateFaultRates([])).toThrow(/object/);
  });
});

describe('FaultInjector', () => {
  const quiet = { failRate: 0, latencyMs: 0, rates: {} };

  it('serves the queue first, in order, by method and path, counting down', () => {
    const f = new FaultInjector(quiet, () => 0.99);
    f.queue.push({ kind: '429', method: 'POST', path: /contacts/, count: 2 }, { kind: 'drop', count: 1 });
    expect(f.choose('GET', '/api/v2/contacts')).toBe('drop');
    expect(f.choose('GET', '/api/v2/contacts')).toBeUndefined();
    expect(f.choose('POST', '/api/v2/deals')).toBeUndefined();
    expect(f.choose('POST', '/api/v2/contacts')).toBe('429');
    expect(f.choose('POST', '/api/v2/contacts')).toBe('429');
    expect(f.choose('POST', '/api/v2/contacts')).toBeUndefined();
    expect(f.pending()).toEqual([]);
  });

  it('picks random faults by probability and honours the path filter', () => {
    const f = new FaultInjector({ failRate: 0.1, latencyMs: 0, rates: { drop: 0.2 }, paths: /deals/ }, mulberry32(1));
    const counts: Record<string, number> = {};
    for (let i = 0; i < 10_000; i++) {
      const k = f.choose('GET', '/api/v2/deals') ?? 'none';
      counts[k] = (counts[k] ?? 0) + 1;
    }
    expect(counts['500']! / 10_000).toBeCloseTo(0.1, 1);
    expect(counts.drop! / 10_000).toBeCloseTo(0.2, 1);
    expect(f.choose('GET', '/api/v2/contacts')).toBeUndefined();
  });

  it('with probability 1 always faults', () => {
    const f = new FaultInjector({ failRate: 0, latencyMs: 0, rates: { truncated: 1 } }, Math.random);
    for (let i = 0; i < 50; i++) expect(f.choose('GET', '/x')).toBe('truncated');
  });
});
