import { describe, expect, it } from 'vitest';
import { countOverlaps, displayPath, fitLabel, uniqueLabels } from './labels';

/** 6 px per character, as the tests' fake canvas measures. */
const measure = { measureText: (text: string) => ({ width: text.length * 6 }) };

describe('uniqueLabels', () => {
  it('uses the last name where it is unique, and just enough of the scope where not', () => {
    expect(
      uniqueLabels(['layer1/w', 'layer2/w', 'layer1/MatMul', 'a/b/read', 'c/b/read', 'loss']),
    ).toEqual(['layer1/w', 'layer2/w', 'MatMul', 'a/b/read', 'c/b/read', 'loss']);
  });

  it('lengthens only the names that collide', () => {
    expect(uniqueLabels(['x/y/Relu', 'z/y/Relu', 'q/Add'])).toEqual([
      'x/y/Relu',
      'z/y/Relu',
      'Add',
    ]);
  });
});

describe('displayPath', () => {
  it('shows a side group by its name', () => {
    expect(displayPath('[init]/layer1/kernel/Assign')).toBe('init/layer1/kernel/Assign');
    expect(displayPath('[gradients]')).toBe('gradients');
    expect(displayPath('layer1/MatMul')).toBe('layer1/MatMul');
  });
});

describe('fitLabel', () => {
  it('keeps a label that fits and cuts one that does not in the middle, keeping the last name', () => {
    expect(fitLabel(measure, 'layer1/w', 60)).toBe('layer1/w');
    const cut = fitLabel(measure, 'layer1/dense/kernel/read', 60);
    expect(cut).toMatch(/^l.*…\/read$/);
    expect(cut.length * 6).toBeLessThanOrEqual(60);
    expect(fitLabel(measure, 'averyveryverylongname', 30)).toBe('aver…');
    expect(fitLabel(measure, 'abc', 3)).toBe('');
  });
});

describe('countOverlaps', () => {
  it('counts pairs of overlapping rectangles, not touching ones', () => {
    const rects = [
      { x: 0, y: 0, w: 10, h: 10 },
      { x: 5, y: 5, w: 10, h: 10 },
      { x: 10, y: 4, w: 10, h: 4 }, // touches the first, overlaps the second
      { x: 100, y: 100, w: 1, h: 1 },
    ];
    expect(countOverlaps(rects)).toBe(2);
    expect(countOverlaps([])).toBe(0);
  });
});
