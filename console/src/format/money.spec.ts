import { formatCount, formatUsd, percentOf } from './money';
import { labelledIndexes, niceScale, shortDay } from './scale';

describe('console money format', () => {
  it('shows dollars and cents from a dollar up, with thousands separators', () => {
    expect(formatUsd(250)).toBe('$250.00');
    expect(formatUsd(150.5)).toBe('$150.50');
    expect(formatUsd(1234.5)).toBe('$1,234.50');
    expect(formatUsd(0.25)).toBe('$0.25');
    expect(formatUsd(0.125)).toBe('$0.13');
    expect(formatUsd(0)).toBe('$0.00');
  });

  it('keeps two significant digits below a dollar, down to the micro-dollar', () => {
    expect(formatUsd(0.0123)).toBe('$0.012');
    expect(formatUsd(0.015)).toBe('$0.015');
    expect(formatUsd(0.5)).toBe('$0.50');
    expect(formatUsd(0.00003)).toBe('$0.00003');
    expect(formatUsd(0.000035)).toBe('$0.000035');
    expect(formatUsd(0.0000004)).toBe('< $0.000001');
    expect(formatUsd(Number.NaN)).toBe('—');
  });

  it('counts with separators and says how much of a limit is used', () => {
    expect(formatCount(183200)).toBe('183,200');
    expect(percentOf(12.5, 250)).toBe(5);
    expect(percentOf(300, 250)).toBe(120);
    expect(percentOf(0, 0)).toBe(0);
    expect(percentOf(1, 0)).toBe(100);
  });
});

describe('console chart scale', () => {
  it('rounds the top up to 1, 2 or 5 × a power of ten, with ticks from 0', () => {
    expect(niceScale(0.0123)).toEqual({ top: 0.015, ticks: [0, 0.005, 0.01, 0.015] });
    expect(niceScale(250)).toEqual({ top: 300, ticks: [0, 100, 200, 300] });
    expect(niceScale(0.3)).toEqual({ top: 0.3, ticks: [0, 0.1, 0.2, 0.3] });
    expect(niceScale(1)).toEqual({ top: 1, ticks: [0, 0.5, 1] });
    expect(niceScale(0)).toEqual({ top: 0, ticks: [0] });
  });

  it('labels at most a few evenly spaced days, in words', () => {
    expect(labelledIndexes(31)).toEqual([0, 6, 12, 18, 24, 30]);
    expect(labelledIndexes(3)).toEqual([0, 1, 2]);
    expect(labelledIndexes(0)).toEqual([]);
    expect(shortDay('2026-03-03')).toBe('Mar 3');
  });
});
