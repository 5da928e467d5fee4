/** What the memory and timing panels share: throttling, the time extent and the time cursor. */

export interface PanelOptions {
  /** Least time between two recomputations while events stream in (ms); 0: every update. */
  throttleMs?: number;
  /** Plot height in px (default: the panel's own). */
  height?: number;
}

/**
 * Runs `work` now, or once at the end of the throttle window when called again too soon. The
 * window grows to four times what the work last took, so recomputing a large trace while events
 * stream in never takes more than a fifth of the time.
 */
export class Throttle {
  private last = -Infinity;
  private cost = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly ms: number,
    private readonly work: () => void,
  ) {}

  call(): void {
    if (this.timer !== null) {
      return;
    }
    const wait = this.last + Math.max(this.ms, 4 * this.cost) - Date.now();
    if (wait <= 0 || this.ms <= 0) {
      this.run();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, wait);
  }

  private run(): void {
    const started = Date.now();
    this.last = started;
    this.work();
    this.cost = Date.now() - started;
  }

  cancel(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }
}

/** The x range (ms) of a panel for an extent, padded so bars at the edges stay visible. */
export function xRangeMs(extent: [number, number] | null): [number, number] | undefined {
  if (extent === null) {
    return undefined;
  }
  const [lo, hi] = extent;
  const pad = Math.max((hi - lo) * 0.01, 1);
  return [(lo - pad) / 1e6, (hi + pad) / 1e6];
}

/** The vertical line at the scrubber time (none at the end). */
export function cursorShapes(time: number | null, colour: string): Record<string, unknown>[] {
  if (time === null) {
    return [];
  }
  return [
    {
      type: 'line',
      xref: 'x',
      yref: 'paper',
      x0: time / 1e6,
      x1: time / 1e6,
      y0: 0,
      y1: 1,
      line: { color: colour, width: 1.5 },
    },
  ];
}

interface AxisLike {
  _offset: number;
  _length: number;
  p2l?: (px: number) => number;
  p2c?: (px: number) => number;
}

/**
 * A pointer event's position in data coordinates of a cartesian plot, from the axes plotly keeps
 * on the plot element (`_fullLayout`); null outside the plot area or before plotly has drawn.
 * Plotly's own hover events only fire near data points, which bars and steps rarely have.
 */
export function pointerToData(
  plot: HTMLElement,
  event: MouseEvent,
): { x: number; y: number; xPerPx: number } | null {
  const full = (plot as unknown as { _fullLayout?: { xaxis?: AxisLike; yaxis?: AxisLike } })
    ._fullLayout;
  const xa = full?.xaxis;
  const ya = full?.yaxis;
  const toX = xa?.p2l ?? xa?.p2c;
  const toY = ya?.p2l ?? ya?.p2c;
  if (!xa || !ya || !toX || !toY) {
    return null;
  }
  const rect = plot.getBoundingClientRect();
  const px = event.clientX - rect.left - xa._offset;
  const py = event.clientY - rect.top - ya._offset;
  if (px < 0 || px > xa._length || py < 0 || py > ya._length) {
    return null;
  }
  const x = toX.call(xa, px);
  return { x, y: toY.call(ya, py), xPerPx: Math.abs(toX.call(xa, px + 1) - x) };
}

/**
 * A pointer event's y in data coordinates where it is left of the plot area (over the y axis's
 * tick labels); null elsewhere or before plotly has drawn.
 */
export function pointerToYLabel(plot: HTMLElement, event: MouseEvent): number | null {
  const ya = (plot as unknown as { _fullLayout?: { xaxis?: AxisLike; yaxis?: AxisLike } })
    ._fullLayout?.yaxis;
  const xa = (plot as unknown as { _fullLayout?: { xaxis?: AxisLike } })._fullLayout?.xaxis;
  const toY = ya?.p2l ?? ya?.p2c;
  if (!xa || !ya || !toY) {
    return null;
  }
  const rect = plot.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top - ya._offset;
  return px >= 0 && px < xa._offset && py >= 0 && py <= ya._length ? toY.call(ya, py) : null;
}
