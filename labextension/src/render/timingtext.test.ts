import { describe, expect, it } from 'vitest';
import { busyShare, fitLabel, middleCut } from './timingtext';

describe('busyShare', () => {
  it('says a small share with the digits it needs, never 0% for ops that ran', () => {
    expect(busyShare(0.4)).toBe('40%');
    expect(busyShare(0.034)).toBe('3%');
    expect(busyShare(0.0004)).toBe('0.04%');
    expect(busyShare(0.0000123)).toBe('0.0012%');
    expect(busyShare(0.004)).toBe('0.4%');
    expect(busyShare(1)).toBe('100%');
    expect(busyShare(0)).toBe('0%');
  });
});

describe('middleCut', () => {
  it('keeps the start and the end of a name around an ellipsis', () => {
    expect(middleCut('/job:worker/replica:0/task:1/GPU:0', 12)).toBe('/job:…/GPU:0');
    expect(middleCut('GPU:0', 12)).toBe('GPU:0');
    expect(middleCut('worker/1 GPU:0', 9).length).toBe(9);
  });
});

describe('fitLabel', () => {
  it('fits a name in a width: whole, its leaf, its leaf cut, or nothing', () => {
    expect(fitLabel('tower_0/dense/MatMul', 200)).toBe('tower_0/dense/MatMul');
    expect(fitLabel('tower_0/dense/MatMul', 60)).toBe('MatMul');
    expect(fitLabel('tower_0/dense/MatMul', 40)).toBe('MatM…');
    expect(fitLabel('tower_0/dense/MatMul', 20)).toBeNull();
  });
});
