import { afterEach, describe, expect, it, vi } from 'vitest';
import { cursorShapes, Throttle, timeExtent, xRangeMs } from './panel';
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

describe('timeExtent', () => {
  const events = (rows: [number, number, number][]) => ({
    count: rows.length,
    kind: Int8Array.from(rows.map((r) => r[0])),
    t0: Float64Array.from(rows.map((r) => r[1])),
    t1: Float64Array.from(rows.map((r) => r[2])),
  });

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
