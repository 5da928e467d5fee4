import { describe, expect, it } from 'vitest';
import {
  FILTERED_ALPHA,
  LIVE_DONE,
  LIVE_NONE,
  LIVE_RUNNING,
  LIVE_WAITING,
  WAITING_ALPHA,
  boxAlpha,
  colourBoxes,
  progressMarks,
} from './dagcolour';
import { buildDagModel, storeHierarchy } from './dagmodel';
import { allExpanded } from './scopes';
import { DONE, RUNNING, WAITING } from './opstate';
import { PlacementStore } from './store';
import { smallDocument } from './__tests__/fixtures';

describe('progressMarks', () => {
  it('is null without a run in flight', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    expect(
      progressMarks(buildDagModel(store, allExpanded(storeHierarchy(store))), store),
    ).toBeNull();
  });

  it('marks each box waiting, running or done in the run in flight', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const model = buildDagModel(store, allExpanded(storeHierarchy(store)));
    store.setProgress({ run: 2, waiting: [2, 42], running: [1], done: [] });
    expect(Array.from(progressMarks(model, store)!)).toEqual([
      LIVE_NONE,
      LIVE_RUNNING,
      LIVE_WAITING,
    ]);
  });

  it('marks a folded scope by its most advanced op', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const model = buildDagModel(store, new Set()); // boxes: a, tower_0 (b, c)
    const marks = (waiting: number[], running: number[], done: number[]) => {
      store.setProgress({ run: 2, waiting, running, done });
      return Array.from(progressMarks(model, store)!);
    };
    expect(marks([2], [1], [0])).toEqual([LIVE_DONE, LIVE_RUNNING]);
    expect(marks([2], [], [0, 1])).toEqual([LIVE_DONE, LIVE_DONE]);
    expect(marks([0, 1, 2], [], [])).toEqual([LIVE_WAITING, LIVE_WAITING]);
  });
});

describe('boxAlpha', () => {
  it('fades waiting ops and fades filtered-out ones further', () => {
    expect(boxAlpha(0, LIVE_NONE)).toBe(1);
    expect(boxAlpha(0, LIVE_DONE)).toBe(1);
    expect(boxAlpha(0, LIVE_RUNNING)).toBe(1);
    expect(boxAlpha(0, LIVE_WAITING)).toBe(WAITING_ALPHA);
    expect(boxAlpha(1, LIVE_WAITING)).toBe(FILTERED_ALPHA);
    expect(boxAlpha(1, LIVE_RUNNING)).toBe(FILTERED_ALPHA);
    expect(WAITING_ALPHA).toBeGreaterThan(FILTERED_ALPHA);
    expect(WAITING_ALPHA).toBeLessThan(1);
  });
});

describe('colourBoxes with a run in flight', () => {
  it("colours the live states in 'state' mode, and the past without them", () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const model = buildDagModel(store, allExpanded(storeHierarchy(store)));
    store.setProgress({ run: 2, waiting: [2], running: [1], done: [0] });
    expect(Array.from(colourBoxes(model, store, 'state', null).index)).toEqual([
      DONE,
      RUNNING,
      WAITING,
    ]);
    expect(Array.from(colourBoxes(model, store, 'state', 150).index)).toEqual([DONE, DONE, DONE]);
    // other modes keep their fills (the marks fade and outline them)
    const device = colourBoxes(model, store, 'device', null);
    store.setProgress(null);
    expect(colourBoxes(model, store, 'device', null)).toEqual(device);
  });
});
