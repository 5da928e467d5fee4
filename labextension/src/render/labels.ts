/**
 * Box labels that say which op or group a box is: the shortest ending of its name that no other
 * drawn box shares (`layer1/w` and `layer2/w`, not `w` twice), cut in the middle when too long so
 * both the start and the last name stay readable (shorter still on a small box: `…/read`,
 * `Conv2DBa…`); and the count of drawn labels that overlap.
 */
import { isSideKey } from './auxiliary';

/** A side group's key shows as its name: `[init]/layer1` reads `init/layer1`. */
export function displayPath(key: string): string {
  const slash = key.indexOf('/');
  const first = slash < 0 ? key : key.slice(0, slash);
  return isSideKey(first) ? first.slice(1, -1) + (slash < 0 ? '' : key.slice(slash)) : key;
}

/** For each full name, its shortest trailing run of '/'-parts that is unique among `names`. */
export function uniqueLabels(names: readonly string[]): string[] {
  const parts = names.map((name) => name.split('/'));
  const taken = new Int32Array(names.length).fill(1);
  const label = (i: number) => parts[i].slice(parts[i].length - taken[i]).join('/');
  for (;;) {
    const byLabel = new Map<string, number[]>();
    names.forEach((_, i) => {
      const text = label(i);
      const list = byLabel.get(text);
      if (list === undefined) {
        byLabel.set(text, [i]);
      } else {
        list.push(i);
      }
    });
    let grew = false;
    for (const list of byLabel.values()) {
      if (list.length < 2) {
        continue;
      }
      for (const i of list) {
        if (taken[i] < parts[i].length) {
          taken[i]++;
          grew = true;
        }
      }
    }
    if (!grew) {
      return names.map((_, i) => label(i));
    }
  }
}

/** Something that measures text in pixels (a canvas context). */
export interface Measure {
  measureText(text: string): { width: number };
}

/** A cut label keeps at least this many characters of its text (fewer say nothing): `Con…`. */
export const LEAST_KEPT = 3;

/**
 * `text` if it fits `width` px, else its start and end around an ellipsis: the last '/'-part is
 * kept whole when it fits, so `layer1/dense/kernel/read` becomes `layer1/d…/read` (or `…/read`).
 * Where not even that fits, the last part (`…Relu`) or its start (`Conv2DBa…` for
 * `tower_0/Conv2DBackpropFilter`): the name that tells a box from its neighbours in its scope.
 * A text without '/' keeps its start. '' where the room holds fewer than LEAST_KEPT characters
 * and an ellipsis.
 */
export function fitLabel(measure: Measure, text: string, width: number): string {
  if (measure.measureText(text).width <= width) {
    return text;
  }
  const slash = text.lastIndexOf('/');
  const tail = slash < 0 ? '' : text.slice(slash);
  if (tail !== '' && measure.measureText(`…${tail}`).width <= width) {
    const head = longest(
      measure,
      text.length - tail.length,
      (n) => `${text.slice(0, n)}…${tail}`,
      width,
    );
    return `${text.slice(0, head)}…${tail}`;
  }
  const last = tail.slice(1);
  if (last.length < LEAST_KEPT) {
    return fitStart(measure, text, width);
  }
  if (measure.measureText(`…${last}`).width <= width) {
    return `…${last}`;
  }
  const n = longest(measure, last.length - 1, (k) => `${last.slice(0, k)}…`, width);
  return n < LEAST_KEPT ? '' : `${last.slice(0, n)}…`;
}

/**
 * Each text fitted to its width (fitLabel), kept apart: texts that differ but were cut to the same
 * string are cut again keeping their end (`…e_1/MatMul`), else their start, whichever tells them
 * apart, so two boxes never say the same thing.
 */
export function fitLabels(
  measure: Measure,
  texts: readonly string[],
  widths: readonly number[],
): string[] {
  const fitted = texts.map((text, i) => fitLabel(measure, text, widths[i]));
  const byFitted = new Map<string, number[]>();
  fitted.forEach((text, i) => {
    const list = byFitted.get(text);
    if (list === undefined) {
      byFitted.set(text, [i]);
    } else {
      list.push(i);
    }
  });
  for (const [text, list] of byFitted) {
    const distinct = new Set(list.map((i) => texts[i])).size;
    if (text === '' || distinct < 2) {
      continue;
    }
    for (const cut of [fitEnd, fitStart]) {
      const again = list.map((i) => cut(measure, texts[i], widths[i]));
      if (new Set(again).size === distinct) {
        list.forEach((i, k) => (fitted[i] = again[k]));
        break;
      }
    }
  }
  return fitted;
}

/**
 * `text`, or its longest start that fits with an ellipsis after it ('' when that keeps fewer than
 * LEAST_KEPT characters).
 */
function fitStart(measure: Measure, text: string, width: number): string {
  if (measure.measureText(text).width <= width) {
    return text;
  }
  const n = longest(measure, text.length - 1, (k) => `${text.slice(0, k)}…`, width);
  return n < LEAST_KEPT ? '' : `${text.slice(0, n)}…`;
}

/**
 * `text`, or its longest end that fits with an ellipsis before it ('' when that keeps fewer than
 * LEAST_KEPT characters).
 */
function fitEnd(measure: Measure, text: string, width: number): string {
  if (measure.measureText(text).width <= width) {
    return text;
  }
  const n = longest(measure, text.length - 1, (k) => `…${text.slice(text.length - k)}`, width);
  return n < LEAST_KEPT ? '' : `…${text.slice(text.length - n)}`;
}

/** The largest n in [0, max] with measure(make(n)) <= width (0 when none fits). */
function longest(
  measure: Measure,
  max: number,
  make: (n: number) => string,
  width: number,
): number {
  let low = 0;
  let high = max;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (measure.measureText(make(mid)).width <= width) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return low;
}

export interface LabelRect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Pairs of rectangles that overlap (touching edges do not count): a sweep along x. */
export function countOverlaps(rects: readonly LabelRect[]): number {
  const order = rects.map((_, i) => i).sort((a, b) => rects[a].x - rects[b].x);
  let pairs = 0;
  for (let i = 0; i < order.length; i++) {
    const a = rects[order[i]];
    for (let j = i + 1; j < order.length; j++) {
      const b = rects[order[j]];
      if (b.x >= a.x + a.w) {
        break;
      }
      if (b.y < a.y + a.h && a.y < b.y + b.h) {
        pairs++;
      }
    }
  }
  return pairs;
}
