/**
 * What the memory and timing panels share about their x axis, so that they line up: the runs'
 * collapsed time axis (timeaxis.ts), the window shown by default on it, and its ticks (round
 * times on the run's clock, clock.ts, labelled with the real times they stand for).
 */
import type { RunActivity } from './activity';
import type { RunClock } from './clock';
import { niceTicks, timeTickLabels } from './ticks';
import type { AxisMap } from './timingmodel';
import { padWindow } from './timingmodel';

/** Least room between two ticks' labels (px). */
const TICK_PX = 110;
/** Ticks an axis gets however narrow its plot. */
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

/**
 * Plotly x axis ticks (ms along the axis) for a window `widthPx` wide: round times on `clock`
 * (0 at its run's start), at least LEAST_TICKS, labelled with the real times they stand for on
 * that clock (past a collapsed gap, the time the run that follows really started), no two alike.
 */
export function axisTicks(
  axis: AxisMap,
  clock: Pick<RunClock, 'origin'>,
  window: readonly [number, number] | null,
  widthPx: number,
): { tickvals: number[]; ticktext: string[] } {
  if (window === null) {
    return { tickvals: [], ticktext: [] };
  }
  const zero = axis.toShown(clock.origin);
  const count = Math.max(LEAST_TICKS, Math.floor(widthPx / TICK_PX));
  const ticks = niceTicks(window[0] - zero, window[1] - zero, count, LEAST_TICKS);
  return {
    tickvals: ticks.map((x) => (x + zero) / 1e6),
    ticktext: timeTickLabels(ticks.map((x) => axis.toReal(x + zero) - clock.origin)),
  };
}
