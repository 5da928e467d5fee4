import { describe, expect, it } from 'vitest';
import { IDENTITY_AXIS, type AxisMap } from './timingmodel';
import { axisTicks, tickLabels } from './timewindow';

/** A small deterministic generator (no Math.random: a failure must replay). */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('tickLabels', () => {
  it('gives the issue’s repeating ranges distinct labels', () => {
    expect(tickLabels([1.2801e6, 1.2803e6, 1.2805e6])).toEqual([
      '1.2801 ms',
      '1.2803 ms',
      '1.2805 ms',
    ]);
    expect(tickLabels([1.2261e9, 1.2262e9, 1.2263e9])).toEqual([
      '1.2261 s',
      '1.2262 s',
      '1.2263 s',
    ]);
    expect(tickLabels([0, 500, 1000])).toEqual(['0.0 µs', '0.5 µs', '1.0 µs']);
  });

  it('never repeats a label over thousands of ranges, from ns to minutes', () => {
    const random = generator(25);
    for (let trial = 0; trial < 5000; trial++) {
      const start = random() * 10 ** (random() * 11);
      const span = 10 ** (random() * 10) * (0.5 + random());
      const count = 2 + Math.floor(random() * 12);
      const values = Array.from({ length: count }, (_, i) => start + (span * i) / (count - 1));
      const labels = tickLabels(values);
      for (let i = 1; i < labels.length; i++) {
        if (values[i] - values[i - 1] >= 1) {
          expect(labels[i], `${labels.join(', ')}`).not.toBe(labels[i - 1]);
        }
      }
    }
  });
});

describe('axisTicks', () => {
  it('labels the ticks with distinct real times, once each inside a collapsed gap', () => {
    // Display times 2-4 ms stand for one instant (a gap collapsed to its marker).
    const collapsed: AxisMap = {
      toShown: (t) => t,
      toReal: (x) => (x < 2e6 ? x : x <= 4e6 ? 2e6 : x + 1e9),
    };
    const { tickvals, ticktext } = axisTicks(collapsed, [0, 10e6], 1200);
    expect(new Set(ticktext).size).toBe(ticktext.length);
    expect(tickvals.filter((v) => v >= 2 && v <= 4)).toEqual([2]);
    expect(tickvals.length).toBe(ticktext.length);
    // No tick at the left edge, where the y axis's lowest label is.
    expect(axisTicks(IDENTITY_AXIS, [0, 10e6], 1000).tickvals[0]).toBeGreaterThan(0);
    const plain = axisTicks(IDENTITY_AXIS, [1.28e6, 1.2806e6], 600);
    expect(plain.ticktext.length).toBeGreaterThanOrEqual(3);
    expect(new Set(plain.ticktext).size).toBe(plain.ticktext.length);
  });
});
