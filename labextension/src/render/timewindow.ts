/**
 * What the memory and timing panels share about their x axis, so that they line up: the runs'
 * collapsed time axis (timeaxis.ts), the window shown by default on it, and its ticks (round
 * display times labelled with the real times they stand for).
 */
import type { RunActivity } from './activity';
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

/** The most decimals a tick label gets to tell two ticks apart (ns, in seconds). */
const MAX_DECIMALS = 9;

const UNITS: readonly (readonly [number, string, number])[] = [
  [1e9, 's', 3],
  [1e6, 'ms', 2],
  [1e3, 'µs', 1],
  [1, 'ns', 0],
];

/**
 * Labels for ascending real times (ns), one unit for all (the largest's) and as many decimals
 * as it takes for neighbours to differ: "1.2801 ms, 1.2803 ms", never "1.28 ms" twice.
 */
export function tickLabels(values: readonly number[]): string[] {
  const largest = Math.max(0, ...values.map((v) => Math.abs(v)));
  const [scale, unit, least] = UNITS.find(([size]) => largest >= size) ?? UNITS[UNITS.length - 1];
  let labels: string[] = [];
  for (let decimals = least; decimals <= MAX_DECIMALS; decimals++) {
    labels = values.map((v) => `${(v / scale).toFixed(decimals)} ${unit}`);
    if (labels.every((label, i) => i === 0 || label !== labels[i - 1])) {
      break;
    }
  }
  return labels;
}

/** No tick label this close to the left edge (px): the y axis's lowest label sits there. */
const LEFT_CLEAR_PX = 40;

/**
 * Plotly x axis ticks (ms along the axis) for a window `widthPx` wide, labelled in real time.
 * Ticks that stand for the same real time (inside a collapsed gap) are kept once, and none
 * crowds the y axis's corner.
 */
export function axisTicks(
  axis: AxisMap,
  window: readonly [number, number] | null,
  widthPx: number,
): { tickvals: number[]; ticktext: string[] } {
  if (window === null) {
    return { tickvals: [], ticktext: [] };
  }
  const ticks = niceTicks(window[0], window[1], Math.max(2, Math.floor(widthPx / TICK_PX)));
  const kept: number[] = [];
  const real: number[] = [];
  const clear = window[0] + ((window[1] - window[0]) * LEFT_CLEAR_PX) / Math.max(widthPx, 1);
  for (const x of ticks) {
    if (x < clear) {
      continue;
    }
    const time = axis.toReal(x);
    if (real.length === 0 || time > real[real.length - 1]) {
      kept.push(x);
      real.push(time);
    }
  }
  return { tickvals: kept.map((x) => x / 1e6), ticktext: tickLabels(real) };
}

/** The x axis title: says when idle gaps between runs are collapsed. */
export function axisTitle(collapsed: boolean): string {
  return collapsed ? 'time since origin · idle gaps collapsed' : 'time since origin';
}
