import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunActivity } from './activity';
import { EventColumns } from './events';
import { cursorShapes, Throttle, xRangeMs } from './panel';
import { EventKind } from './types';

afterEach(() => vi.useRealTimers());

describe('Throttle', () => {
  it('runs at once, then at most once per window, with the last call honoured', () => {
    vi.useFakeTimers();
    let runs = 0;
    const throttle = new Throttle(100, () => {
      runs += 1;
    });
    throttle.call();
    expect(runs).toBe(1);
    throttle.call();
    throttle.call();
    expect(runs).toBe(1);
    vi.advanceTimersByTime(100);
    expect(runs).toBe(2);
    throttle.call();
    throttle.cancel();
    vi.advanceTimersByTime(1000);
    expect(runs).toBe(2);
  });

  it('widens the window to four times the cost of the work', () => {
    vi.useFakeTimers();
    let runs = 0;
    const throttle = new Throttle(10, () => {
      runs += 1;
      vi.setSystemTime(Date.now() + 50); // the work takes 50 ms
    });
    throttle.call();
    throttle.call();
    vi.advanceTimersByTime(100);
    expect(runs).toBe(1);
    vi.advanceTimersByTime(100);
    expect(runs).toBe(2);
  });

  it('runs every call with a zero window', () => {
    let runs = 0;
    const throttle = new Throttle(0, () => {
      runs += 1;
    });
    throttle.call();
    throttle.call();
    expect(runs).toBe(2);
  });
});

describe('RunActivity.extent (what the panels show first)', () => {
  const events = (rows: [number, number, number][]) => {
    const columns = new EventColumns();
    columns.appendLists({
      kind: rows.map((r) => r[0]),
      t0: rows.map((r) => r[1]),
      t1: rows.map((r) => r[2]),
      run: rows.map(() => 0),
    });
    return columns;
  };
  const timeExtent = (columns: EventColumns) => {
    const activity = new RunActivity();
    activity.update(columns);
    return activity.extent;
  };

  it('spans runs, ops and transfers, not placements or a late free', () => {
    const extent = timeExtent(
      events([
        [EventKind.PLACEMENT, 0, 0],
        [EventKind.RUN, 100, 400],
        [EventKind.OP, 120, 300],
        [EventKind.TRANSFER, 300, 450],
        [EventKind.FREE, 9000, 9000],
      ]),
    );
    expect(extent).toEqual([100, 450]);
    expect(xRangeMs(extent)).toEqual([(100 - 3.5) / 1e6, (450 + 3.5) / 1e6]);
  });

  it('keeps up with appended events, and the runs’ active spans', () => {
    const columns = events([
      [EventKind.RUN, 100, 400],
      [EventKind.OP, 120, 300],
    ]);
    const activity = new RunActivity();
    activity.update(columns);
    expect(activity.spans.get(0)).toEqual([120, 300]);
    columns.appendLists({ kind: [EventKind.OP], t0: [500], t1: [700], run: [1] });
    expect(activity.update(columns)).toBe(true);
    expect(activity.update(columns)).toBe(false);
    expect(activity.extent).toEqual([100, 700]);
    expect(activity.activeExtent).toEqual([120, 700]);
    expect(activity.timeAxis.windows).toEqual([
      [120, 300],
      [500, 700],
    ]);
    columns.clear();
    activity.update(columns);
    expect(activity.extent).toBeNull();
  });

  it('falls back to memory events, and to nothing', () => {
    expect(timeExtent(events([[EventKind.ALLOC, 50, 50]]))).toEqual([50, 50]);
    expect(timeExtent(events([[EventKind.PLACEMENT, 0, 0]]))).toBeNull();
    expect(xRangeMs(null)).toBeUndefined();
  });
});

describe('cursorShapes', () => {
  it('draws a line at the time, in ms, and nothing at the end', () => {
    expect(cursorShapes(null, 'red')).toEqual([]);
    expect(cursorShapes(2e6, 'red')[0]).toMatchObject({ type: 'line', x0: 2, x1: 2 });
  });
});
