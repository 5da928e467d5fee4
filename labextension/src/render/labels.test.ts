import { describe, expect, it } from 'vitest';
import {
  LEAST_KEPT,
  countOverlaps,
  displayPath,
  distinguishingParts,
  fitLabel,
  fitLabels,
  freeSpot,
  keptParts,
  shortestLabel,
} from './labels';

/** 6 px per character, as the tests' fake canvas measures. */
const measure = { measureText: (text: string) => ({ width: text.length * 6 }) };

/** Notebook 04's towers: each tower's gradients, as the scopes TF gives them. */
const TOWERS = [0, 1].flatMap((t) =>
  ['MatMul_grad', 'Mean_grad', 'sub_grad', 'Square_grad'].map(
    (op) => `tower_${t}/gradients/tower_${t}/${op}`,
  ),
);

describe('distinguishingParts', () => {
  it('keeps, beside each path with the same last name, the part where they first differ', () => {
    expect(
      distinguishingParts([
        'layer1/w',
        'layer2/w',
        'layer1/MatMul',
        'mlp/dense_0/kernel/Adam',
        'mlp/dense_1/kernel/Adam',
        'loss',
      ]),
    ).toEqual([[0], [0], [], [1], [1], []]);
  });

  it("keeps the tower of each tower's gradient scope", () => {
    expect(distinguishingParts(TOWERS)).toEqual(TOWERS.map(() => [0]));
  });

  it('keeps every part that tells a path from one look-alike or another', () => {
    expect(distinguishingParts(['a/x/Relu', 'a/y/Relu', 'b/x/Relu'])).toEqual([
      [0, 1],
      [0, 1],
      [0],
    ]);
  });
});

describe('keptParts and shortestLabel', () => {
  it('elide what is not kept, one ellipsis per run', () => {
    const path = 'tower_0/gradients/tower_0/MatMul_grad';
    expect(keptParts(path, [0])).toBe('tower_0/…/MatMul_grad');
    expect(keptParts('mlp/dense_0/kernel/Adam', [1])).toBe('…/dense_0/…/Adam');
    expect(keptParts('a/b/read', [])).toBe('…/read');
    expect(keptParts('layer1/w', [0])).toBe('layer1/w');
    expect(shortestLabel(path, [0])).toBe('tower_0/…/MatMul_grad');
    expect(shortestLabel('mlp/dense_0/kernel/Adam', [1])).toBe('…/dense_0/…/Adam');
    expect(shortestLabel('layer1/w', [0])).toBe('layer1/w');
    expect(shortestLabel('loss', [])).toBe('loss');
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
    expect(fitLabel(measure, 'layer1/dense/kernel/read', 60)).toBe('…/read');
    expect(fitLabel(measure, 'layer1/dense/kernel/read', 80)).toBe('layer1/…/read');
    expect(fitLabel(measure, 'layer1/dense/kernel/read', 120)).toBe('layer1/dense/…/read');
    expect(fitLabel(measure, 'averyveryverylongname', 30)).toBe('aver…');
    expect(fitLabel(measure, 'abc', 3)).toBe('');
  });
});

describe('fitLabel on a small box', () => {
  it('keeps the distinctive end: the last name whole, else its start', () => {
    expect(fitLabel(measure, 'tower_0/conv1/conv2', 42)).toBe('…/conv2');
    // one rule for every box of a scope: a head of whole parts or none, never `towe…/conv2`
    expect(fitLabel(measure, 'tower_0/conv1/conv2', 66)).toBe('…/conv2');
    expect(fitLabel(measure, 'tower_0/conv1/conv2', 89)).toBe('…/conv2');
    expect(fitLabel(measure, 'tower_0/conv1/conv2', 90)).toBe('tower_0/…/conv2');
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

describe('fitLabel keeping the parts that tell a box apart', () => {
  const widths = [60, 90, 126, 132, 160, 228];

  it("cuts the towers' gradient scopes in the middle, keeping the tower and the last name", () => {
    const keep = distinguishingParts(TOWERS);
    for (const width of widths) {
      const fitted = TOWERS.map((text, i) => fitLabel(measure, text, width, keep[i]));
      for (const [i, text] of fitted.entries()) {
        expect(text.length * 6).toBeLessThanOrEqual(width); // never wider than its room
        const op = TOWERS[i].split('/').pop()!;
        if (width >= `…/${op}`.length * 6) {
          expect(text.endsWith(`/${op}`)).toBe(true); // the distinguishing tail, whole
        }
      }
      if (width >= 'tower_0/…/Square_grad'.length * 6) {
        // Room for the tower too: every label differs, and none is `tower_0/gra…`.
        expect(new Set(fitted).size).toBe(TOWERS.length);
        expect(fitted.every((text) => /^tower_\d\//.test(text))).toBe(true);
      }
    }
    expect(fitLabel(measure, TOWERS[0], 126, keep[0])).toBe('tower_0/…/MatMul_grad');
    expect(fitLabel(measure, TOWERS[0], 160, keep[0])).toBe('tower_0/…/MatMul_grad');
    expect(fitLabel(measure, TOWERS[0], 186, keep[0])).toBe('tower_0/gradients/…/MatMul_grad');
  });

  it('elides the parts before and between the kept ones where the head does not fit', () => {
    expect(fitLabel(measure, 'mlp/dense_0/kernel/Adam', 96, [1])).toBe('…/dense_0/…/Adam');
    expect(fitLabel(measure, 'mlp/dense_0/kernel/Adam', 108, [1])).toBe('mlp/dense_0/…/Adam');
    expect(fitLabel(measure, 'mlp/dense_0/kernel/Adam', 60, [1])).toBe('…/Adam');
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

describe('freeSpot', () => {
  it('takes the first place that covers no label and stays in the plot', () => {
    const placed = [{ x: 0, y: 0, w: 40, h: 12 }];
    const at = (x: number, y: number) => ({ x, y, w: 30, h: 12 });
    expect(freeSpot([at(10, 6), at(50, 6)], placed, 200)).toEqual(at(50, 6));
    expect(freeSpot([at(10, 12), at(50, 6)], placed, 200)).toEqual(at(10, 12)); // edges touch
    expect(freeSpot([at(180, 20)], placed, 200)).toBeNull(); // past the right edge
    expect(freeSpot([at(-5, 20)], placed, 200)).toBeNull();
  });
});
