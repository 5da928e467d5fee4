import { describe, expect, it } from 'vitest';
import { MIN_CANVAS_HEIGHT, canvasHeightFor } from './dagsize';
import { FIT_MARGIN } from './viewport';

describe('canvasHeightFor', () => {
  const room = { width: 880, height: 480 };

  it('is as tall as a small graph needs at 1:1, never shorter than MIN_CANVAS_HEIGHT', () => {
    // A 3-op graph: two constants over their product, two rows of boxes.
    expect(canvasHeightFor({ width: 220, height: 100 }, room)).toBe(
      Math.max(MIN_CANVAS_HEIGHT, 100 + 2 * FIT_MARGIN),
    );
    expect(canvasHeightFor({ width: 220, height: 40 }, room)).toBe(MIN_CANVAS_HEIGHT);
  });

  it('is the height a wide graph needs once fitted to the width', () => {
    // 1,696 world px wide on an 880 px canvas: fitted at 0.5, so 300 world px need 150 + margins.
    expect(canvasHeightFor({ width: 1696, height: 300 }, room)).toBe(150 + 2 * FIT_MARGIN);
  });

  it('fills the room for a graph taller than it, as before', () => {
    expect(canvasHeightFor({ width: 1000, height: 5000 }, room)).toBe(480);
    expect(canvasHeightFor({ width: 200, height: 470 }, room)).toBe(480);
  });
});
