import { describe, expect, it } from 'vitest';
import {
  LABEL_FONT_PX,
  LABEL_ROOM_PX,
  MIN_LABEL_FONT_PX,
  NORMAL_FONT_PX,
  OP_HEIGHT,
  READABLE_SCALE,
  TITLE_ROOM_PX,
  TITLE_STRIP,
  labelFontPx,
} from './boxmetrics';

describe('labelFontPx', () => {
  it('is LABEL_FONT_PX at the readable zoom, and the normal font on a box drawn closer', () => {
    expect(labelFontPx(LABEL_ROOM_PX)).toBe(LABEL_FONT_PX);
    expect(labelFontPx(OP_HEIGHT * READABLE_SCALE)).toBe(LABEL_FONT_PX);
    expect(labelFontPx(TITLE_STRIP * READABLE_SCALE, TITLE_ROOM_PX)).toBe(LABEL_FONT_PX);
    // A small graph drawn at 1:1 (and any closer zoom) says its names in the inspector's font.
    expect(labelFontPx(OP_HEIGHT)).toBe(NORMAL_FONT_PX);
    expect(labelFontPx(OP_HEIGHT * 4)).toBe(NORMAL_FONT_PX);
    expect(labelFontPx(TITLE_STRIP, TITLE_ROOM_PX)).toBe(NORMAL_FONT_PX);
    expect(labelFontPx(OP_HEIGHT, LABEL_ROOM_PX, 14)).toBe(14); // a bigger page font
  });

  it('is smaller, keeping the margins, where the graph is fitted below the readable zoom', () => {
    // An op box on half a notebook page: 28 world px at 0.43 is 12 px tall.
    expect(labelFontPx(OP_HEIGHT * 0.43)).toBe(10);
    expect(labelFontPx(MIN_LABEL_FONT_PX + LABEL_ROOM_PX - LABEL_FONT_PX)).toBe(MIN_LABEL_FONT_PX);
    expect(labelFontPx(TITLE_STRIP * 0.4, TITLE_ROOM_PX)).toBe(9);
  });

  it('is 0 (no name) where not even the smallest font fits', () => {
    expect(labelFontPx(MIN_LABEL_FONT_PX + LABEL_ROOM_PX - LABEL_FONT_PX - 0.1)).toBe(0);
    expect(labelFontPx(MIN_LABEL_FONT_PX - 0.1, TITLE_ROOM_PX)).toBe(0);
    expect(labelFontPx(0)).toBe(0);
  });
});
