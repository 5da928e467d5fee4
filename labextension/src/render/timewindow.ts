/**
 * What the memory and timing panels share about their x axis, so that they line up: the runs'
 * collapsed time axis (timeaxis.ts), the window shown by default on it, and its ticks (round
 * display times labelled with the real times they stand for).
 */
import type { RunActivity } from './activity';
import { formatNs } from './format';
import type { AxisMap } from './timingmodel';
import { padWindow } from './timingmodel';

/** Least room between two ticks' labels (px). */
const TICK_PX = 110;

/** About `count` round tick positions in [lo, hi]. */
export function niceTicks(lo: number, hi: number, count: number): number[] {
  const span = hi - lo;
  if (!(span > 0)) {
    return [];
  }
  const raw = span / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const ticks: number[] = [];
  for (let x = Math.ceil(lo / step) * step; x <= hi; x += step) {
    ticks.push(x);
  }
  return ticks;
}

/**
 * The display window (ns along the collapsed axis) shown first: the picked run's active span,
 * else every run's, padded; without runs' activity, the memory events' extent; null without any.
 */
export function defaultWindow(activity: RunActivity, run: number | null): [number, number] | null {
  const axis = activity.timeAxis;
  const span = run === null ? undefined : activity.spans.get(run);
  if (span !== undefined) {
    return padWindow([axis.toShown(span[0]), axis.toShown(span[1])]);
  }
  const extent = axis.extent;
  if (extent !== null) {
    return padWindow(extent);
  }
  const all = activity.extent;
  return all === null ? null : padWindow(all);
}

/** Plotly x axis ticks (ms along the axis) for a window `widthPx` wide, labelled in real time. */
export function axisTicks(
  axis: AxisMap,
  window: readonly [number, number] | null,
  widthPx: number,
): { tickvals: number[]; ticktext: string[] } {
  if (window === null) {
    return { tickvals: [], ticktext: [] };
  }
  const ticks = niceTicks(window[0], window[1], Math.max(2, Math.floor(widthPx / TICK_PX)));
  return {
    tickvals: ticks.map((x) => x / 1e6),
    ticktext: ticks.map((x) => formatNs(axis.toReal(x))),
  };
}

/** The x axis title: says when idle gaps between runs are collapsed. */
export function axisTitle(collapsed: boolean): string {
  return collapsed ? 'time since origin (idle gaps between runs collapsed)' : 'time since origin';
}
