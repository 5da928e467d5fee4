import { describe, expect, it } from 'vitest';
import { niceTicks, timeTickLabels } from './ticks';
import { TimeAxis } from './timeaxis';
import { axisTicks, type AxisTicks, LEAST_TICKS, tickCharPx } from './timewindow';
import { random } from './__tests__/fixtures';

/** A value spread over many orders of magnitude: 10^[lo, hi) times a random mantissa. */
const magnitude = (next: () => number, lo: number, hi: number) => 10 ** (lo + next() * (hi - lo));

const distinct = (labels: readonly string[]) => new Set(labels).size === labels.length;

/** 1 to 8 runs of a loop: active for 10^[2,7) ns, idle for 10^[3,10) ns between them. */
function loopRuns(next: () => number): [number, number][] {
  const windows: [number, number][] = [];
  let t = magnitude(next, 0, 9);
  const runs = 1 + Math.floor(next() * 8);
  for (let r = 0; r < runs; r++) {
    const length = magnitude(next, 2, 7);
    windows.push([t, t + length]);
    t += length + magnitude(next, 3, 10);
  }
  return windows;
}

describe('niceTicks', () => {
  it('picks round ticks', () => {
    expect(niceTicks(0, 100, 5)).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(3, 7, 2)).toEqual([4, 6]);
    expect(niceTicks(5, 5, 4)).toEqual([]);
  });

  it('gives at least the ticks asked for, however narrow the range', () => {
    const next = random(1);
    for (let i = 0; i < 2000; i++) {
      const lo = (next() - 0.3) * magnitude(next, 0, 10);
      const hi = lo + magnitude(next, -2, 10);
      const ticks = niceTicks(lo, hi, 1 + Math.floor(next() * 12), LEAST_TICKS);
      expect(ticks.length, `${lo}..${hi}`).toBeGreaterThanOrEqual(LEAST_TICKS);
      expect(ticks.every((t) => t >= lo - (hi - lo) * 1e-9 && t <= hi + (hi - lo) * 1e-9)).toBe(
        true,
      );
      expect(ticks.every((t, k) => k === 0 || t > ticks[k - 1])).toBe(true);
    }
  });

  it('puts 0 at exactly 0', () => {
    expect(niceTicks(-0.3, 1, 4)).toContain(0);
    expect(Object.is(niceTicks(-0.5, 3, 3)[0], 0)).toBe(true);
  });
});

describe('timeTickLabels', () => {
  it('reads the issue’s repeated labels apart', () => {
    // Ticks 0.4 µs apart around 1.28 ms: two decimals of a millisecond read 1.28 ms five times.
    const values = [1_280_000, 1_280_400, 1_280_800, 1_281_200, 1_281_600];
    const labels = timeTickLabels(values);
    expect(distinct(labels)).toBe(true);
    expect(labels[0]).toBe('1.2800 ms');
    // A second and a quarter, 1 µs apart.
    expect(distinct(timeTickLabels([1.226e9, 1.226001e9, 1.226002e9]))).toBe(true);
  });

  it('gives every label of an axis one unit and as many digits as the spacing needs', () => {
    expect(timeTickLabels([0, 200, 400, 600])).toEqual(['0 ns', '200 ns', '400 ns', '600 ns']);
    expect(timeTickLabels([0, 500_000, 1_000_000, 1_500_000])).toEqual([
      '0.0 ms',
      '0.5 ms',
      '1.0 ms',
      '1.5 ms',
    ]);
    expect(timeTickLabels([-1000, 0, 1000])).toEqual(['\u22121 µs', '0 µs', '1 µs']);
  });

  it('never repeats a label over many generated ranges', () => {
    const next = random(2);
    for (let i = 0; i < 3000; i++) {
      const lo = (next() - 0.2) * magnitude(next, 0, 11);
      const hi = lo + magnitude(next, 0, 10);
      const ticks = niceTicks(lo, hi, 2 + Math.floor(next() * 14), LEAST_TICKS);
      const labels = timeTickLabels(ticks);
      expect(distinct(labels), `${lo}..${hi}: ${labels.join(', ')}`).toBe(true);
    }
  });
});

/**
 * What is wrong with `ticks` on a plot whose x axis shows `window` (ns) over `width` px, with
 * plotly's margins of 40 px on the left and 12 on the right: labels (at their font's average
 * character) that leave the plot or overlap, and fewer than two ticks.
 */
function unreadable(ticks: AxisTicks, window: readonly [number, number], width: number): string[] {
  const charPx = tickCharPx(ticks.tickfont?.size);
  const problems: string[] = [];
  if (ticks.tickvals.length < 2) {
    problems.push(`${ticks.tickvals.length} ticks`);
  }
  let lastEnd = -Infinity;
  ticks.tickvals.forEach((ms, k) => {
    const x = ((ms * 1e6 - window[0]) / (window[1] - window[0])) * width;
    const half = (ticks.ticktext[k].length * charPx) / 2;
    if (x - half < -40 || x + half > width + 12) {
      problems.push(`${ticks.ticktext[k]} leaves the plot`);
    }
    if (x - half < lastEnd) {
      problems.push(`${ticks.ticktext[k]} overlaps the label before it`);
    }
    lastEnd = x + half;
  });
  return problems;
}

describe('axisTicks', () => {
  it('fits the labels of short runs far apart in a narrow plot (notebook 01 at 600 px)', () => {
    // The eager cell of notebook 01: runs of a few µs, 0.8 ms and 35.5 ms after the first, on
    // one collapsed axis, in a plot 220 px wide (100 to 150 px between its margins). Once drawn
    // as `0.000 ms, 0.005 ms, 0.803 ms, 35.504 ms`, overlapping and cut by the plot's edges.
    const windows: [number, number][] = [
      [0, 5_000],
      [799_000, 804_000],
      [35_500_000, 35_505_000],
    ];
    const axis = new TimeAxis(windows);
    const [lo, hi] = axis.extent!;
    const window: [number, number] = [lo - 2_000, hi + 2_000];
    for (const width of [100, 120, 150]) {
      const ticks = axisTicks(axis, { origin: 0 }, window, width);
      expect(unreadable(ticks, window, width), ticks.ticktext.join(', ')).toEqual([]);
      expect(distinct(ticks.ticktext)).toBe(true);
    }
  });

  it('never draws a label past the plot or over another, at any width or zoom', () => {
    const next = random(4);
    for (let i = 0; i < 1500; i++) {
      const windows = loopRuns(next);
      const axis = new TimeAxis(windows);
      const [lo, hi] = axis.extent!;
      const window: [number, number] = [lo, hi + 1];
      const width = 100 + next() * 500;
      const ticks = axisTicks(axis, { origin: windows[0][0] }, window, width);
      const problems = unreadable(ticks, window, width);
      expect(problems, `${width} px: ${ticks.ticktext.join(', ')}`).toEqual([]);
    }
  });

  it('labels ticks in the clock’s time, from 0 at its run’s start', () => {
    const axis = new TimeAxis([[614_000, 1_143_300]]);
    const { ticktext, tickvals } = axisTicks(axis, { origin: 614_000 }, [608_000, 1_150_000], 800);
    expect(ticktext[0]).toBe('0 µs');
    expect(tickvals[0]).toBeCloseTo(0.614, 9);
    expect(ticktext.length).toBeGreaterThanOrEqual(LEAST_TICKS);
  });

  it('puts ticks past collapsed gaps at multiples of one step inside the runs', () => {
    // Three runs of 5 µs, ms apart: the gaps are collapsed, so display time is not real time.
    const windows: [number, number][] = [
      [0, 5_000],
      [1_153_000, 1_158_000],
      [2_005_000, 2_010_000],
    ];
    const axis = new TimeAxis(windows);
    const [lo, hi] = axis.extent!;
    for (const width of [150, 300, 900, 1600]) {
      const { tickvals, ticktext } = axisTicks(axis, { origin: 0 }, [lo - 100, hi + 100], width);
      expect(tickvals.length, `${width} px`).toBeGreaterThanOrEqual(LEAST_TICKS);
      const real = tickvals.map((x) => axis.toReal(x * 1e6));
      // Each in a run, its label the real time there, a multiple of the closest two's spacing.
      expect(real.every((t) => windows.some(([a, b]) => t >= a - 1e-6 && t <= b + 1e-6))).toBe(
        true,
      );
      // Round times: a common step of at least a tenth of a run ...
      const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
      const step = real.map(Math.round).reduce(gcd);
      expect(step, real.join(', ')).toBeGreaterThanOrEqual(500);
      // ... and ticks in one run a step apart, the same in every run.
      const inRun = windows.flatMap(([a, b]) => {
        const mine = real.filter((t) => t >= a - 1e-6 && t <= b + 1e-6);
        return mine.slice(1).map((t, k) => Math.round(t - mine[k]));
      });
      expect(new Set(inRun).size, inRun.join(', ')).toBeLessThanOrEqual(1);
      expect(distinct(ticktext)).toBe(true);
    }
  });

  it('never repeats a label on a collapsed axis of many runs, at any width or zoom', () => {
    const next = random(3);
    for (let i = 0; i < 1500; i++) {
      const windows = loopRuns(next);
      const axis = new TimeAxis(windows);
      const [shownLo, shownHi] = axis.extent!;
      // The whole axis, or a zoom into part of it.
      const zoom = next() < 0.5 ? 1 : magnitude(next, -4, 0);
      const lo = shownLo + next() * (shownHi - shownLo) * (1 - zoom);
      const window: [number, number] = [lo, lo + (shownHi - shownLo) * zoom + 1];
      const origin = windows[Math.floor(next() * windows.length)][0];
      const width = 200 + next() * 1800;
      const { tickvals, ticktext } = axisTicks(axis, { origin }, window, width);
      expect(tickvals.length).toBeGreaterThanOrEqual(LEAST_TICKS);
      expect(distinct(ticktext), ticktext.join(', ')).toBe(true);
    }
  });
});
