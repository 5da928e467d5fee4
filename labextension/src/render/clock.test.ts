// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { axisTitle, clockKind, runClock, runLine } from './clock';
import { runsSummary } from './inspector';
import { Scrubber } from './scrubber';
import { PlacementStore } from './store';
import { TimeAxis } from './timeaxis';
import { axisTicks } from './timewindow';
import { TimingSource } from './types';
import { ViewState } from './viewstate';
import { columns, smallDocument } from './__tests__/fixtures';

/**
 * Like notebook 01's eager cell: a placement event at the origin, then three runs of one modeled
 * op each, 614 µs and more after it, whose records (the wall clock) last far longer than the op.
 */
function eagerDocument() {
  const doc = smallDocument();
  const M = TimingSource.MODELED;
  doc.runs = [
    { id: 0, t0: 1000 + 600_000, t1: 1000 + 1_076_840, status: 'ok', error: null, fetches: [] },
    { id: 1, t0: 1000 + 1_500_000, t1: 1000 + 1_520_000, status: 'ok', error: null, fetches: [] },
    { id: 2, t0: 1000 + 2_100_000, t1: 1000 + 2_190_000, status: 'ok', error: null, fetches: [] },
  ];
  doc.events = columns([
    [1, 0, 0, 0, 0, -1, 0, 0, -1, -1],
    [0, 614_000, 615_000, -1, -1, -1, 0, M, 0, -1],
    [2, 614_000, 615_000, 0, 1, 0, 24, M, 0, -1],
    [2, 1_550_000, 1_551_000, 1, 1, 0, 24, M, 1, -1],
    [2, 2_188_000, 2_193_000, 2, 1, 0, 16, M, 2, -1],
  ]);
  return doc;
}

/** "5.0 µs" in seconds. */
function seconds(text: string): number {
  const [value, unit] = text.split(' ');
  return Number(value) * { ns: 1e-9, µs: 1e-6, ms: 1e-3, s: 1 }[unit]!;
}

describe('runClock', () => {
  it('starts at the run’s first op, measures its step, and says it was modeled', () => {
    const store = PlacementStore.fromDocument(eagerDocument());
    const all = runClock(store, null);
    expect(all).toMatchObject({ run: 0, origin: 614_000, step: 1000, kind: 'modeled' });
    expect(runClock(store, 2)).toMatchObject({ run: 2, origin: 2_188_000, step: 5000 });
  });

  it('names measured, modeled and mixed sources', () => {
    expect(clockKind(1 << TimingSource.CLOCK)).toBe('measured');
    expect(clockKind(1 << TimingSource.CUDA_EVENT)).toBe('measured');
    expect(clockKind(1 << TimingSource.MODELED)).toBe('modeled');
    expect(clockKind((1 << TimingSource.MODELED) | (1 << TimingSource.CLOCK))).toBe(
      'modeled and measured',
    );
    expect(clockKind(0)).toBeNull();
  });
});

describe('runLine', () => {
  it('says a dry run computed nothing, and only of a dry run', () => {
    const doc = eagerDocument();
    doc.runs[1] = { ...doc.runs[1], dry: true };
    const store = PlacementStore.fromDocument(doc);
    expect(runLine(store.runs[1], 3, runClock(store, 1))).toMatch(
      /^run 2 of 3 · dry run, shapes only · ok · step 1\.0 µs \(modeled\) · wall clock /,
    );
    for (const run of [0, 2]) {
      expect(runLine(store.runs[run], 3, null)).not.toContain('dry');
    }
  });
});

describe('one clock in every view', () => {
  it('header, run picker, scrubber and axis agree on each run’s step', () => {
    const store = PlacementStore.fromDocument(eagerDocument());
    const state = new ViewState();
    const parent = document.createElement('div');
    const scrubber = new Scrubber(parent, store, state);
    const label = parent.querySelector('.placeviz-time-label')!;
    const axis = store.activity().timeAxis;
    for (const [run, step] of [
      [0, '1.0 µs'],
      [1, '1.0 µs'],
      [2, '5.0 µs'],
    ] as const) {
      state.set({ run });
      // The header names the step and, apart, the wall clock.
      expect(runsSummary(store, run)).toMatch(
        new RegExp(`^run ${run + 1} of 3 · ok · step ${step} \\(modeled\\) · wall clock `),
      );
      // The scrubber ends at the step, on the run's clock.
      expect(label.textContent).toBe(`end · ${step} since run ${run + 1} started`);
      // The picker lists the same step.
      const option = [...scrubber.runSelect.options].find((o) => o.value === String(run))!;
      expect(option.textContent).toBe(runLine(store.runs[run], 3, runClock(store, run)));
      // The axis reads 0 at the run's start, and each tick the time since then at its place, up
      // to the run's end.
      const clock = runClock(store, run);
      const start = axis.toShown(clock.origin);
      const ticks = axisTicks(axis, clock, [start, start + clock.step!], 900);
      expect(ticks.ticktext[0]).toMatch(/^0(\.0+)? [nµ]s$/);
      ticks.tickvals.forEach((x, k) => {
        const since = axis.toReal(x * 1e6) - clock.origin;
        expect(seconds(ticks.ticktext[k])).toBeCloseTo(since / 1e9, 12);
        expect(since).toBeLessThanOrEqual(clock.step! + 1e-6);
      });
    }
    // All runs: the first run's clock; the end is the last run's end since then.
    state.set({ run: null });
    expect(label.textContent).toBe('end · 1.58 ms since run 1 started');
    scrubber.dispose();
  });

  it('words the axis title to fit, never cutting it', () => {
    const clock = runClock(PlacementStore.fromDocument(eagerDocument()), null);
    expect(axisTitle(clock, true)).toBe(
      'time since run 1 started, idle gaps between runs collapsed (modeled)',
    );
    let previous = Infinity;
    for (let width = 900; width >= 20; width -= 10) {
      const title = axisTitle(clock, true, width);
      expect(title.length * 7 <= width || title === 'time').toBe(true);
      expect(title.length).toBeLessThanOrEqual(previous);
      previous = title.length;
    }
  });

  it('reads 0 at the first run’s start on an axis that collapses the runs’ gaps', () => {
    const store = PlacementStore.fromDocument(eagerDocument());
    const axis: TimeAxis = store.activity().timeAxis;
    const clock = runClock(store, null);
    const [lo, hi] = axis.extent!;
    const { ticktext } = axisTicks(axis, clock, [lo, hi], 600);
    expect(ticktext[0]).toMatch(/^0(\.0+)? (ns|µs|ms|s)$/);
    expect(new Set(ticktext).size).toBe(ticktext.length);
  });
});
