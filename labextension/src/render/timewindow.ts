/**
 * What the memory and timing panels share about their x axis, so that they line up: the runs'
 * collapsed time axis (timeaxis.ts), the window shown by default on it, zooming and panning it, and
 * its ticks (round times on the run's clock, clock.ts, labelled with the real times they stand
 * for).
 */
import type { RunActivity } from './activity';
import type { RunClock } from './clock';
import { niceAbove, niceTicks, smallerStep, timeTickLabels } from './ticks';
import type { AxisMap } from './timeaxis';

/** Least room between two ticks' labels (px). */
const TICK_PX = 110;
/** Ticks an axis gets where that many fit. */
export const LEAST_TICKS = 3;

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

/** The axis ticks are read on: a time axis's map, and the runs' spans it keeps (real ns). */
type TickAxis = AxisMap & { readonly windows?: readonly (readonly [number, number])[] };

/** An average tick label character (px) at the axis font, and at the small font. */
const CHAR_PX = 6.4;
const SMALL_FONT_PX = 9;
const SMALL_CHAR_PX = 5.3;
/** Least room between two tick labels (px). */
const LABEL_GAP_PX = 10;

/** An average tick label character's width (px) at `font` (undefined: the axis font). */
export function tickCharPx(font?: number): number {
  return font === SMALL_FONT_PX ? SMALL_CHAR_PX : CHAR_PX;
}
/** Steps tried at most, from the coarsest down. */
const MOST_STEPS = 40;

/** Plotly x axis ticks: positions (display ms), labels, and a smaller font where one is needed. */
export interface AxisTicks {
  tickvals: number[];
  ticktext: string[];
  tickfont?: { size: number };
}

/**
 * Plotly x axis ticks (ms along the axis) for a window `widthPx` wide: round times on `clock`
 * (0 at its run's start), labelled with the real times they stand for, no two alike, at least
 * LEAST_TICKS where that many fit, else the most that fit (two, where two short runs far apart
 * leave room for one label each). Past collapsed idle gaps (several runs in view) the ticks are multiples of one
 * step inside each run's span, so every label is a round time and ticks a step apart read a step
 * apart; labels never overlap (a smaller font where the plot is narrow) nor run past the plot's
 * left (`leftPx`) and right (`rightPx`) margins.
 */
export function axisTicks(
  axis: TickAxis,
  clock: Pick<RunClock, 'origin'>,
  window: readonly [number, number] | null,
  widthPx: number,
  rightPx = 12,
  leftPx = 40,
): AxisTicks {
  if (window === null || !(window[1] > window[0])) {
    return { tickvals: [], ticktext: [] };
  }
  const origin = clock.origin;
  const width = Math.max(widthPx, 1);
  const nsPerPx = (window[1] - window[0]) / width;
  const wanted = Math.max(LEAST_TICKS, Math.floor(widthPx / TICK_PX));
  const spans = runSpansInView(axis, window);
  const active = spans.length > 1 ? spans.reduce((sum, [a, b]) => sum + b - a, 0) : 0;
  const span = active > 0 ? active : window[1] - window[0];
  // The axis font; a smaller one; that with the unit on the last label only ("0.5", "1.0 ms").
  const tiers: [number, number, boolean][] = [
    [0, CHAR_PX, false],
    [SMALL_FONT_PX, SMALL_CHAR_PX, false],
    [SMALL_FONT_PX, SMALL_CHAR_PX, true],
  ];
  let fitted: AxisTicks | null = null; // the most ticks that fit, where none gets LEAST_TICKS
  for (const [font, charPx, unitLast] of tiers) {
    let best: number[] = [];
    let step = niceAbove(span);
    for (let i = 0; i < MOST_STEPS && step >= span * 1e-9 && step >= 4 * nsPerPx; i++) {
      const values =
        spans.length > 1 ? inSpans(axis, origin, spans, step) : onAxis(axis, origin, window, step);
      const place = { axis, origin, window, nsPerPx, charPx, rightPx, leftPx };
      const kept = spaced(place, values, unitLast);
      if (kept.length >= wanted) {
        best = kept;
        break;
      }
      if (kept.length > best.length) {
        best = kept;
      }
      step = smallerStep(step);
    }
    const ticks = labelled(axis, origin, best, font, unitLast);
    if (best.length >= LEAST_TICKS) {
      return ticks;
    }
    if (best.length > (fitted?.tickvals.length ?? 1)) {
      fitted = ticks;
    }
  }
  if (fitted !== null) {
    return fitted; // two round times that fit say more than three cut by the plot's edges
  }
  // No two round times fit apart (a very narrow plot): ticks along the axis, as plotly sets
  // them, those whose labels fit.
  const zero = axis.toShown(origin);
  const along = niceTicks(window[0] - zero, window[1] - zero, LEAST_TICKS, LEAST_TICKS);
  const values = along.map((x) => axis.toReal(x + zero) - origin);
  const place = { axis, origin, window, nsPerPx, charPx: SMALL_CHAR_PX, rightPx, leftPx };
  return labelled(axis, origin, spaced(place, values, true), SMALL_FONT_PX, true);
}

/** Plotly ticks at `values` (real ns since origin), labelled (`unitLast`: the unit on the last
 * label only) at `font` (0: the axis font). */
function labelled(
  axis: TickAxis,
  origin: number,
  values: readonly number[],
  font: number,
  unitLast: boolean,
): AxisTicks {
  const labels = timeTickLabels(values);
  return {
    tickvals: values.map((v) => axis.toShown(v + origin) / 1e6),
    ticktext: unitLast ? labels.map((l, k) => (k < labels.length - 1 ? number(l) : l)) : labels,
    ...(font > 0 ? { tickfont: { size: font } } : {}),
  };
}

/** The runs' active spans (display ns) inside `window`, clipped to it. */
function runSpansInView(axis: TickAxis, window: readonly [number, number]): [number, number][] {
  const spans: [number, number][] = [];
  for (const [a, b] of axis.windows ?? []) {
    const lo = Math.max(axis.toShown(a), window[0]);
    const hi = Math.min(axis.toShown(b), window[1]);
    if (hi > lo) {
      spans.push([lo, hi]);
    }
  }
  return spans;
}

/** Multiples of `step` (real ns since `origin`) inside each span: slope 1, so a step apart. */
function inSpans(
  axis: TickAxis,
  origin: number,
  spans: readonly (readonly [number, number])[],
  step: number,
): number[] {
  const values: number[] = [];
  for (const [lo, hi] of spans) {
    const a = axis.toReal(lo) - origin;
    const b = axis.toReal(hi) - origin;
    for (let k = Math.ceil(a / step - 1e-9); k * step <= b + step * 1e-9; k++) {
      const v = k * step === 0 ? 0 : k * step;
      if (values.length === 0 || v > values[values.length - 1]) {
        values.push(v);
      }
    }
  }
  return values;
}

/** Multiples of `step` along the axis in `window`, as the real times (since origin) they show. */
function onAxis(
  axis: TickAxis,
  origin: number,
  window: readonly [number, number],
  step: number,
): number[] {
  const zero = axis.toShown(origin);
  const values: number[] = [];
  const lo = window[0] - zero;
  const hi = window[1] - zero;
  for (let k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) {
    const v = axis.toReal(k * step + zero) - origin;
    if (values.length === 0 || v > values[values.length - 1]) {
      values.push(v);
    }
  }
  return values;
}

/** A tick label without its unit: `0.5 ms` → `0.5`. */
function number(label: string): string {
  return label.slice(0, label.lastIndexOf(' '));
}

/** Where ticks go: the axis, the window (display ns) and its scale, and the room for labels. */
interface Placing {
  axis: TickAxis;
  origin: number;
  window: readonly [number, number];
  nsPerPx: number;
  charPx: number;
  rightPx: number;
  leftPx: number;
}

/**
 * The values (real ns since origin, increasing) whose labels (`unitLast`: but the last without
 * their unit), `charPx` a character, keep LABEL_GAP_PX apart and inside the plot with its
 * margins; the first of each crowd kept.
 */
function spaced(place: Placing, values: readonly number[], unitLast: boolean): number[] {
  const { axis, origin, window, nsPerPx, charPx, rightPx, leftPx } = place;
  if (values.length === 0 || values.length > 1000) {
    return [];
  }
  const labels = timeTickLabels(values);
  const right = (window[1] - window[0]) / nsPerPx;
  const kept: number[] = [];
  let lastEnd = -Infinity;
  values.forEach((v, k) => {
    const x = (axis.toShown(v + origin) - window[0]) / nsPerPx;
    const whole = (labels[k].length * charPx) / 2;
    const half = unitLast ? (number(labels[k]).length * charPx) / 2 : whole;
    // Any of them may be the last, which says its unit (centred, so on both sides): room for it.
    if (x - whole < -leftPx || x + whole > right + rightPx || x - whole < lastEnd + LABEL_GAP_PX) {
      return;
    }
    kept.push(v);
    lastEnd = x + half;
  });
  return kept;
}

/** Zoom a display window [lo, hi] by `factor` (< 1 zooms in) around `centre`. */
export function zoomWindow(
  window: readonly [number, number],
  factor: number,
  centre = (window[0] + window[1]) / 2,
): [number, number] {
  const lo = centre - (centre - window[0]) * factor;
  const hi = centre + (window[1] - centre) * factor;
  return hi - lo >= 1 ? [lo, hi] : [centre - 0.5, centre + 0.5];
}

/** Pan a display window by `fraction` of its width (negative: left). */
export function panWindow(window: readonly [number, number], fraction: number): [number, number] {
  const shift = (window[1] - window[0]) * fraction;
  return [window[0] + shift, window[1] + shift];
}

/** A window padded by 1% each side (at least 1 ns), so bars at the edges stay visible. */
export function padWindow(window: readonly [number, number]): [number, number] {
  const pad = Math.max((window[1] - window[0]) * 0.01, 1);
  return [window[0] - pad, window[1] + pad];
}
