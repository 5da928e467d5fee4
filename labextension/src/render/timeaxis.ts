/**
 * A time axis that collapses idle gaps: runs of a loop are active for microseconds and idle for
 * milliseconds between them, so on a linear axis every run is a sliver. The axis keeps each
 * active window at its real width and shrinks each longer gap to `gap` ns, mapping real time
 * (ns since origin) to display time (ns along the axis) and back, piecewise linearly.
 */

/** Real time (ns since origin) to display time along the axis and back. */
export interface AxisMap {
  toShown(t: number): number;
  toReal(x: number): number;
}

export const IDENTITY_AXIS: AxisMap = { toShown: (t) => t, toReal: (x) => x };

/** How wide a collapsed gap is drawn, as a fraction of the median active window. */
export const GAP_FRACTION = 0.15;

export class TimeAxis implements AxisMap {
  /** Breakpoints: real times and their display times, both increasing. */
  private readonly real: number[] = [];
  private readonly shown: number[] = [];
  /** Display start of each window, in order. */
  readonly starts: number[] = [];

  /**
   * `windows`: the active spans, [start, end] ns. Overlapping windows merge; gaps wider than
   * `gap` ns (default: GAP_FRACTION of the median window) are drawn `gap` wide.
   */
  constructor(windows: readonly (readonly [number, number])[], gap?: number) {
    const sorted = windows
      .filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b))
      .map(([a, b]): [number, number] => [a, Math.max(a, b)])
      .sort((x, y) => x[0] - y[0]);
    const merged: [number, number][] = [];
    for (const [a, b] of sorted) {
      const last = merged[merged.length - 1];
      if (last !== undefined && a <= last[1]) {
        last[1] = Math.max(last[1], b);
      } else {
        merged.push([a, b]);
      }
    }
    const widths = merged.map(([a, b]) => b - a).sort((x, y) => x - y);
    const median = widths.length > 0 ? widths[widths.length >> 1] : 0;
    this.gap = gap ?? Math.max(1, median * GAP_FRACTION);
    this.windows = merged;
    let x = merged.length > 0 ? merged[0][0] : 0;
    merged.forEach(([a, b], i) => {
      if (i > 0) {
        const idle = a - merged[i - 1][1];
        x += Math.min(idle, this.gap);
      }
      this.real.push(a, b);
      this.shown.push(x, x + (b - a));
      this.starts.push(x);
      x += b - a;
    });
  }

  readonly gap: number;
  /** The merged active windows, [start, end] ns, in order. */
  readonly windows: readonly (readonly [number, number])[];

  /** Whether the panels draw this axis with its idle gaps collapsed: several runs, none picked. */
  collapsesGaps(run: number | null): boolean {
    return this.windows.length > 1 && run === null;
  }

  /** Display extent [first window's start, last window's end]; null without windows. */
  get extent(): [number, number] | null {
    const n = this.shown.length;
    return n === 0 ? null : [this.shown[0], this.shown[n - 1]];
  }

  /** Display time of real time t. */
  toShown(t: number): number {
    return interpolate(this.real, this.shown, t);
  }

  /** Real time of display time x. */
  toReal(x: number): number {
    return interpolate(this.shown, this.real, x);
  }
}

/** Piecewise linear through (from[i], to[i]); slope 1 outside them. */
function interpolate(from: readonly number[], to: readonly number[], v: number): number {
  const n = from.length;
  if (n === 0) {
    return v;
  }
  if (v <= from[0]) {
    return to[0] + (v - from[0]);
  }
  if (v >= from[n - 1]) {
    return to[n - 1] + (v - from[n - 1]);
  }
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (from[mid] <= v) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const span = from[hi] - from[lo];
  return span > 0 ? to[lo] + ((v - from[lo]) / span) * (to[hi] - to[lo]) : to[lo];
}
