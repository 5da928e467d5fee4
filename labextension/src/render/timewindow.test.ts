import { describe, expect, it } from 'vitest';
import { padWindow, panWindow, zoomWindow } from './timewindow';

describe('zoom window', () => {
  it('zooms around a point and pans by a fraction of the width', () => {
    expect(zoomWindow([0, 100], 0.5)).toEqual([25, 75]);
    expect(zoomWindow([0, 100], 0.5, 0)).toEqual([0, 50]);
    expect(zoomWindow([0, 100], 2, 100)).toEqual([-100, 100]);
    expect(panWindow([0, 100], 0.25)).toEqual([25, 125]);
    expect(panWindow([0, 100], -0.25)).toEqual([-25, 75]);
    expect(padWindow([0, 1000])).toEqual([-10, 1010]);
    // Never narrower than a nanosecond.
    expect(zoomWindow([0, 1], 0.001)).toEqual([0, 1]);
  });
});
