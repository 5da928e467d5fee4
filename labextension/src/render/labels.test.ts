import { describe, expect, it } from 'vitest';
import {
  LEAST_KEPT,
  countOverlaps,
  displayPath,
  fitLabel,
  fitLabels,
  uniqueLabels,
} from './labels';

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

describe('fitLabel on a small box', () => {
  it('keeps the distinctive end: the last name whole, else its start', () => {
    expect(fitLabel(measure, 'tower_0/conv1/conv2', 42)).toBe('…/conv2');
    expect(fitLabel(measure, 'tower_0/conv1/conv2', 54)).toBe('to…/conv2');
    // no room for '…/Relu': the last name after an ellipsis, not the scope's start ('a/b…')
    expect(fitLabel(measure, 'a/b/Relu', 30)).toBe('…Relu');
    // no room for the last name whole: its start, not the scope's ('tower_0…')
    expect(fitLabel(measure, 'tower_0/Conv2DBackpropFilter', 54)).toBe('Conv2DBa…');
  });

  it(`says nothing rather than fewer than ${LEAST_KEPT} characters`, () => {
    expect(fitLabel(measure, 'averyveryverylongname', 24)).toBe('ave…');
    expect(fitLabel(measure, 'averyveryverylongname', 23)).toBe('');
    expect(fitLabel(measure, 'tower_0/Conv2DBackpropFilter', 23)).toBe('');
    expect(fitLabel(measure, 'Add', 18)).toBe('Add'); // whole, however short
  });
});

describe('fitLabels', () => {
  it('cuts labels that would read the same again, keeping what tells them apart', () => {
    const texts = ['dense_0/MatMul', 'dense_1/MatMul', 'a/x/Relu', 'b/x/Relu', 'loss', 'loss'];
    const fitted = fitLabels(measure, texts, [60, 60, 36, 36, 60, 60]);
    expect(fitLabel(measure, texts[0], 60)).toBe(fitLabel(measure, texts[1], 60)); // 'de…/MatMul'
    expect(fitted.slice(0, 2)).toEqual(['…_0/MatMul', '…_1/MatMul']);
    expect(fitted.slice(2, 4)).toEqual(['a/x/R…', 'b/x/R…']); // both end in '…/Relu'
    expect(fitted.slice(4)).toEqual(['loss', 'loss']); // the same name says the same
    for (const [i, text] of fitted.entries()) {
      expect(text.length * 6).toBeLessThanOrEqual([60, 60, 36, 36, 60, 60][i]);
    }
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
