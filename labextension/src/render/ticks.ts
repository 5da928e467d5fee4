/**
 * Time axis ticks: round positions, and labels with as many digits as their spacing needs, so no
 * two ticks of an axis read the same (`1.28 ms` three times says nothing).
 */

/** The nice steps within a power of ten, in increasing order. */
const MANTISSAS = [1, 2, 5];

/** The largest nice step (1, 2 or 5 times a power of ten) at most `raw`. */
function niceBelow(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  let best = power;
  for (const m of MANTISSAS) {
    if (m * power <= raw) {
      best = m * power;
    }
  }
  return best;
}

/** The smallest nice step at least `raw`. */
export function niceAbove(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw * (1 - 1e-12)) ?? 10 * power;
}

/** The next nice step below `step`: 5 → 2 → 1 → 0.5. */
export function smallerStep(step: number): number {
  return niceBelow(step * (1 - 1e-9));
}

function ticksOf(lo: number, hi: number, step: number): number[] {
  const first = Math.ceil(lo / step - 1e-9);
  const ticks: number[] = [];
  for (let i = first; i * step <= hi + step * 1e-9; i++) {
    // i * step, not a running sum: no drift, and 0 is exactly 0.
    ticks.push(i * step === 0 ? 0 : i * step);
  }
  return ticks;
}

/**
 * About `count` round tick positions in [lo, hi] (multiples of 1, 2 or 5 times a power of ten),
 * and at least `least` of them however narrow the plot.
 */
export function niceTicks(lo: number, hi: number, count: number, least = 0): number[] {
  const span = hi - lo;
  if (!(span > 0) || !Number.isFinite(span)) {
    return [];
  }
  let step = niceAbove(span / Math.max(1, count));
  let ticks = ticksOf(lo, hi, step);
  while (ticks.length < least && step > span * 1e-9) {
    step = smallerStep(step);
    ticks = ticksOf(lo, hi, step);
  }
  return ticks;
}

const TIME_UNITS: readonly (readonly [number, string])[] = [
  [1, 'ns'],
  [1e3, 'µs'],
  [1e6, 'ms'],
  [1e9, 's'],
];

/** Most decimals a label gets (below a nanosecond's thousandth nothing is told apart). */
const MAX_DECIMALS = 12;

/**
 * Labels for times `values` (ns, increasing): one unit for the axis (the largest value's), and
 * as many decimals as the closest two values need to read differently, the same for every label.
 */
export function timeTickLabels(values: readonly number[]): string[] {
  if (values.length === 0) {
    return [];
  }
  const largest = Math.max(...values.map((v) => Math.abs(v)));
  let [scale, unit] = TIME_UNITS[0];
  for (const [s, u] of TIME_UNITS) {
    if (largest >= s) {
      [scale, unit] = [s, u];
    }
  }
  let gap = Infinity;
  for (let i = 1; i < values.length; i++) {
    const d = Math.abs(values[i] - values[i - 1]);
    if (d > 0) {
      gap = Math.min(gap, d);
    }
  }
  let decimals = Number.isFinite(gap) ? Math.max(0, Math.ceil(-Math.log10(gap / scale) - 1e-9)) : 0;
  decimals = Math.min(decimals, MAX_DECIMALS);
  const format = (d: number) =>
    values.map((v) => {
      const text = (v / scale).toFixed(d);
      return `${/^-0(\.0*)?$/.test(text) ? text.slice(1) : text.replace('-', '\u2212')} ${unit}`;
    });
  let labels = format(decimals);
  while (new Set(labels).size < labels.length && decimals < MAX_DECIMALS) {
    decimals += 1;
    labels = format(decimals);
  }
  return labels;
}
