/**
 * Box labels that say which op or group a box is: its whole name where it fits, else cut in the
 * middle keeping the last name and the parts that tell it from the boxes whose last name is the
 * same (`tower_0/…/MatMul_grad` beside `tower_1/…/MatMul_grad`, never two `tower_0/gra…`);
 * shorter still on a small box (`…/read`, `Conv2DBa…`); and the count of drawn labels that overlap.
 */
import { isSideKey } from './auxiliary';

/** A side group's key shows as its name: `[init]/layer1` reads `init/layer1`. */
export function displayPath(key: string): string {
  const slash = key.indexOf('/');
  const first = slash < 0 ? key : key.slice(0, slash);
  return isSideKey(first) ? first.slice(1, -1) + (slash < 0 ? '' : key.slice(slash)) : key;
}

/**
 * For each '/'-path, the indices of the parts (the last aside) that tell it from the other paths
 * whose last part is the same: each index where, reading from the start, another such path first
 * parts from it. `tower_0/gradients/tower_0/MatMul_grad` beside `tower_1/…` keeps part 0;
 * `mlp/dense_0/kernel/Adam` beside `mlp/dense_1/kernel/Adam` keeps part 1; a path whose last part
 * no other has keeps none. One pass over a trie of prefixes per last part: linear in the parts.
 */
export function distinguishingParts(paths: readonly string[]): number[][] {
  const parts = paths.map((path) => path.split('/'));
  const byLast = new Map<string, number[]>();
  parts.forEach((p, i) => {
    const last = p[p.length - 1];
    const list = byLast.get(last);
    if (list === undefined) {
      byLast.set(last, [i]);
    } else {
      list.push(i);
    }
  });
  const kept: number[][] = paths.map(() => []);
  for (const members of byLast.values()) {
    if (members.length < 2) {
      continue;
    }
    // Per prefix (its first k parts, as text), the distinct parts that follow it.
    const next = new Map<string, Set<string>>();
    for (const i of members) {
      let prefix = '';
      for (const part of parts[i]) {
        let set = next.get(prefix);
        if (set === undefined) {
          set = new Set();
          next.set(prefix, set);
        }
        set.add(part);
        prefix += `${part}/`;
      }
    }
    for (const i of members) {
      const p = parts[i];
      let prefix = '';
      for (let k = 0; k < p.length - 1; k++) {
        if ((next.get(prefix)?.size ?? 0) > 1) {
          kept[i].push(k);
        }
        prefix += `${p[k]}/`;
      }
    }
  }
  return kept;
}

/**
 * The parts `keep` of `path` and its last, in order, an ellipsis for each run left out:
 * `tower_0/…/MatMul_grad`, `…/dense_0/…/Adam`, `…/read`; the path itself when nothing is left out.
 */
export function keptParts(path: string, keep: readonly number[]): string {
  const parts = path.split('/');
  const last = parts.length - 1;
  const shown = new Set([...keep.filter((k) => k < last), last]);
  const out: string[] = [];
  for (let k = 0; k <= last; k++) {
    if (shown.has(k)) {
      out.push(parts[k]);
    } else if (out[out.length - 1] !== '…') {
      out.push('…');
    }
  }
  return out.join('/');
}

/**
 * The shortest text a box of `path` says while it tells the box apart: the path up to its last
 * kept part, an ellipsis and its last part (`tower_0/…/MatMul_grad`; `…/read` keeping none), or
 * the path where that is no shorter. What a box is sized for (boxmetrics.opBoxWidth).
 */
export function shortestLabel(path: string, keep: readonly number[]): string {
  const parts = path.split('/');
  if (parts.length === 1) {
    return path;
  }
  const upTo = keep.length === 0 ? -1 : Math.max(...keep);
  const head = parts.slice(0, upTo + 1).join('/');
  const cut = `${head}${head === '' ? '' : '/'}…/${parts[parts.length - 1]}`;
  return [cut, keptParts(path, keep)].reduce((a, b) => (b.length < a.length ? b : a), path);
}

/**
 * The names boxes and container titles say (displayPath) and the parts each keeps when cut,
 * boxes first: read together, so a folded `gradients/layer1` beside the opened `layer1` keeps
 * what tells them apart.
 */
export function boxPaths(
  boxes: readonly { name: string }[],
  containers: readonly string[] = [],
): { paths: string[]; keeps: number[][] } {
  const paths = [...boxes.map((box) => displayPath(box.name)), ...containers.map(displayPath)];
  return { paths, keeps: distinguishingParts(paths) };
}

/** Something that measures text in pixels (a canvas context). */
export interface Measure {
  measureText(text: string): { width: number };
}

/** A cut label keeps at least this many characters of its text (fewer say nothing): `Con…`. */
export const LEAST_KEPT = 3;

/**
 * `text` if it fits `width` px, else cut in the middle, keeping its last '/'-part whole and the
 * parts `keep` (distinguishingParts) where it can, the first of these that fits:
 * - its start in whole parts (up to and past its kept parts), an ellipsis, its last part:
 *   `layer1/…/read`, `tower_0/…/MatMul_grad` (part 0 kept), `tower_0/gradients/…/MatMul_grad`
 *   with more room; never a part cut inside (`tow…/conv1`), so every box in a scope is cut by
 *   one rule (`tower_0/…/conv1` or `…/conv1` beside `…/pool1`);
 * - the kept parts and the last, the rest elided: `…/dense_0/…/Adam`;
 * - `…/read`; the last part after an ellipsis (`…Relu`), or its start (`Conv2DBa…` for
 *   `tower_0/Conv2DBackpropFilter`): the name that tells a box from its neighbours in its scope.
 * A text without '/' keeps its start. '' where the room holds fewer than LEAST_KEPT characters
 * and an ellipsis.
 */
export function fitLabel(
  measure: Measure,
  text: string,
  width: number,
  keep: readonly number[] = [],
): string {
  const fits = (candidate: string) => measure.measureText(candidate).width <= width;
  if (fits(text)) {
    return text;
  }
  const slash = text.lastIndexOf('/');
  const tail = slash < 0 ? '' : text.slice(slash);
  if (tail !== '') {
    const parts = text.split('/');
    const kept = keep.filter((k) => k < parts.length - 1);
    // The head keeps every kept part whole, with the '/' after the last of them.
    const least =
      kept.length === 0 ? 0 : parts.slice(0, Math.max(...kept) + 1).join('/').length + 1;
    const cut = (n: number) => `${text.slice(0, n)}…${tail}`;
    // The head is whole parts: its first part at least (or up to its kept parts).
    const first = least > 0 ? least : parts[0].length + 1;
    if (first <= text.length - tail.length && fits(cut(first))) {
      const n = longest(measure, text.length - tail.length, cut, width, first);
      // Whole parts only: `tower_0/…/MatMul_grad`, not `tower_0/gra…/MatMul_grad`.
      return cut(text.lastIndexOf('/', n - 1) + 1);
    }
    const elided = keptParts(text, kept);
    if (kept.length > 0 && fits(elided)) {
      return elided;
    }
    if (fits(`…${tail}`)) {
      return `…${tail}`;
    }
  }
  const last = tail.slice(1);
  if (last.length < LEAST_KEPT) {
    return fitStart(measure, text, width);
  }
  if (fits(`…${last}`)) {
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
  keeps: readonly (readonly number[])[] = [],
): string[] {
  const fitted = texts.map((text, i) => fitLabel(measure, text, widths[i], keeps[i]));
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

/** The largest n in [least, max] with measure(make(n)) <= width (`least` when none fits). */
function longest(
  measure: Measure,
  max: number,
  make: (n: number) => string,
  width: number,
  least = 0,
): number {
  let low = least;
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
  /** The box whose name it is, for a name drawn beside its box's own room (a tag). */
  box?: number;
}

/** Whether `a` and `b` overlap (touching edges do not count). */
export function overlaps(a: LabelRect, b: LabelRect): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/**
 * The first of `candidates` inside [0, width] across that overlaps none of `placed`; null when
 * every one would cover another label or leave the plot.
 */
export function freeSpot(
  candidates: readonly LabelRect[],
  placed: readonly LabelRect[],
  width: number,
): LabelRect | null {
  return (
    candidates.find((c) => c.x >= 0 && c.x + c.w <= width && !placed.some((p) => overlaps(c, p))) ??
    null
  );
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
