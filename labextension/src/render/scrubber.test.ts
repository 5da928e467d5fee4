// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PLAY_MS, runSpan, Scrubber } from './scrubber';
import { PlacementStore } from './store';
import { ViewState } from './viewstate';
import { smallDocument } from './__tests__/fixtures';
import type { ViewChange } from './view';

const NOTHING: ViewChange = { tables: false, events: false, progress: false };

function setup() {
  const parent = document.createElement('div');
  const state = new ViewState();
  const store = PlacementStore.fromDocument(smallDocument());
  const scrubber = new Scrubber(parent, store, state);
  const input = parent.querySelector<HTMLInputElement>('input[type=range].placeviz-time')!;
  const play = parent.querySelector<HTMLButtonElement>('button.placeviz-play')!;
  return { parent, state, store, scrubber, input, play };
}

function slide(input: HTMLInputElement, value: number) {
  input.value = String(value);
  input.dispatchEvent(new Event('input'));
}

describe('Scrubber', () => {
  let frames: ((now: number) => void)[] = [];
  beforeEach(() => {
    frames = [];
    vi.stubGlobal('requestAnimationFrame', (cb: (now: number) => void) => frames.push(cb));
    vi.stubGlobal('cancelAnimationFrame', () => {
      frames = [];
    });
  });
  afterEach(() => vi.unstubAllGlobals());

  const runFrame = (now: number) => {
    const pending = frames;
    frames = [];
    pending.forEach((cb) => cb(now));
  };

  it('spans the runs’ activity with the idle gap collapsed, and starts at the end', () => {
    const { input, state, parent, scrubber } = setup();
    // Runs active over [0, 100] and [200, 300]: the 100 ns gap is drawn 15 ns wide.
    expect(scrubber.timeRange).toEqual([0, 300]);
    expect(input.min).toBe('0');
    expect(input.max).toBe('215');
    expect(input.value).toBe('215');
    expect(state.get('time')).toBeNull();
    expect(parent.querySelector('.placeviz-time-label')!.textContent).toBe(
      'end · 300 ns since run 1 started',
    );
  });

  it('sets state.time from the slider; the far end means the end (null)', () => {
    const { input, state, parent } = setup();
    slide(input, 120); // 5 ns into the second run's window
    expect(state.get('time')).toBe(205);
    expect(parent.querySelector('.placeviz-time-label')!.textContent).toBe(
      '205 ns / 300 ns since run 1 started',
    );
    slide(input, 215);
    expect(state.get('time')).toBeNull();
  });

  it('follows state.time set elsewhere', () => {
    const { input, state } = setup();
    state.set({ time: 42 });
    expect(input.value).toBe('42');
    state.set({ time: 250 });
    expect(input.value).toBe('165');
  });

  it('plays from the start to the end in about five seconds, then returns to null', () => {
    const { play, state, scrubber } = setup();
    play.click();
    expect(scrubber.playing).toBe(true);
    expect(play.getAttribute('aria-label')).toBe('Pause');
    runFrame(1000);
    expect(state.get('time')).toBe(0);
    runFrame(1000 + PLAY_MS / 2); // half way along the axis: the middle of the collapsed gap
    expect(state.get('time')).toBeCloseTo(150);
    runFrame(1000 + PLAY_MS + 1);
    expect(state.get('time')).toBeNull();
    expect(scrubber.playing).toBe(false);
    expect(play.getAttribute('aria-label')).toBe('Play');
  });

  it('spans the activity, not the time before it', () => {
    const doc = smallDocument();
    doc.events.t0 = doc.events.t0.map((t) => t + 1000);
    doc.events.t1 = doc.events.t1.map((t) => t + 1000);
    const parent = document.createElement('div');
    const state = new ViewState();
    const scrubber = new Scrubber(parent, PlacementStore.fromDocument(doc), state);
    expect(scrubber.timeRange).toEqual([1000, 1300]);
    scrubber.play();
    runFrame(0);
    expect(state.get('time')).toBe(1000);
    runFrame(PLAY_MS / 2);
    expect(state.get('time')).toBeCloseTo(1000 + 300 / 2);
  });

  it('pauses on a second click and on sliding', () => {
    const { play, input, state, scrubber } = setup();
    play.click();
    runFrame(0);
    runFrame(PLAY_MS / 3);
    play.click();
    expect(scrubber.playing).toBe(false);
    const paused = state.get('time');
    expect(paused).toBeCloseTo(215 / 3);
    play.click(); // resumes from where it was
    runFrame(10_000);
    expect(state.get('time')).toBeCloseTo(paused!);
    slide(input, 10);
    expect(scrubber.playing).toBe(false);
    expect(state.get('time')).toBe(10);
  });

  it('lists runs when there are several, and narrows to the one picked', () => {
    const { parent, state, scrubber } = setup();
    const select = parent.querySelector<HTMLSelectElement>('select.placeviz-run')!;
    expect(select.hidden).toBe(false);
    expect([...select.options].map((o) => o.textContent)).toEqual([
      'all runs (2)',
      'run 1 of 2 · ok · step 100 ns (measured) · wall clock 100 ns',
      'run 2 of 2 · error · step 100 ns (measured) · wall clock 100 ns',
    ]);
    select.value = '1';
    select.dispatchEvent(new Event('change'));
    expect(scrubber.timeRange).toEqual([200, 300]);
    expect(state.get('time')).toBe(300);
    select.value = '';
    select.dispatchEvent(new Event('change'));
    expect(scrubber.timeRange).toEqual([0, 300]);
    expect(state.get('time')).toBeNull();
  });

  it('spans a picked run’s active span and plays it in PLAY_MS however short it is', () => {
    // A loop: each run's ops take 30 ns, its record 500 ns (session overhead), runs 1 ms apart.
    const doc = smallDocument();
    const ops = 3;
    const columns = Object.fromEntries(Object.keys(doc.events).map((k) => [k, [] as number[]]));
    const runs = [];
    for (let r = 0; r < 4; r++) {
      const start = r * 1_000_000;
      runs.push({ id: r, t0: 1000 + start, t1: 1000 + start + 500, status: 'ok' as const });
      for (let k = 0; k < ops; k++) {
        const row = [2, start + 100 + k * 10, start + 110 + k * 10, k, 1, 0, 24, 1, r, -1];
        Object.keys(columns).forEach((name, i) => columns[name].push(row[i]));
      }
    }
    doc.runs = runs;
    doc.events = columns as typeof doc.events;
    const parent = document.createElement('div');
    const state = new ViewState();
    const scrubber = new Scrubber(parent, PlacementStore.fromDocument(doc), state);
    // All runs: 4 windows of 30 ns, gaps drawn 4.5 ns wide.
    expect(scrubber.timeRange).toEqual([100, 3_000_130]);
    expect(Number(scrubber.input.max) - Number(scrubber.input.min)).toBeCloseTo(4 * 30 + 3 * 4.5);
    state.set({ run: 2 });
    expect(scrubber.timeRange).toEqual([2_000_100, 2_000_130]);
    expect(parent.querySelector<HTMLElement>('.placeviz-scrubber')!.dataset.rangeStart).toBe(
      '2000100',
    );
    expect(scrubber.runSelect.value).toBe('2');
    state.set({ time: 2_000_100 });
    scrubber.play();
    runFrame(0);
    runFrame(PLAY_MS / 3);
    expect(state.get('time')).toBeCloseTo(2_000_110);
    runFrame(PLAY_MS + 1);
    expect(state.get('time')).toBe(2_000_130); // a picked run stays at its end
  });

  it('rebuilds the run list only when runs came, keeping the picked run', () => {
    const { parent, store, scrubber } = setup();
    const select = parent.querySelector<HTMLSelectElement>('select.placeviz-run')!;
    select.value = '1';
    select.dispatchEvent(new Event('change'));
    const first = select.options[1];
    scrubber.update({ ...NOTHING, events: true }); // new events, no new runs
    expect(select.options[1]).toBe(first);
    expect(select.value).toBe('1');
    store.applyTables({
      origin_ns: store.originNs,
      devices: [...store.devices],
      nodes: [...store.nodes],
      edges: [...store.edges],
      runs: [...store.runs, { id: 2, t0: 1400, t1: 1500, status: 'ok' }],
    });
    scrubber.update({ ...NOTHING, tables: true });
    expect(select.options[1]).not.toBe(first);
    expect(select.options.length).toBe(4);
    expect(select.options[3].textContent).toBe('run 3 of 3 · ok · wall clock 100 ns');
    expect(select.value).toBe('1');
  });

  it('hides the run list for a single run and disables itself without events', () => {
    const doc = smallDocument();
    doc.runs = doc.runs.slice(0, 1);
    doc.events = { ...doc.events, kind: [], t0: [], t1: [] };
    const parent = document.createElement('div');
    const scrubber = new Scrubber(parent, PlacementStore.fromDocument(doc), new ViewState());
    expect(scrubber.runSelect.hidden).toBe(true);
    expect(scrubber.input.disabled).toBe(true);
    expect(scrubber.playButton.disabled).toBe(true);
    scrubber.dispose();
    expect(parent.childElementCount).toBe(0);
  });

  it('labels run spans relative to the origin', () => {
    const spans = smallDocument().runs.map((run) => runSpan(run, 2, 1000));
    expect(spans.map((s) => [s.start, s.end])).toEqual([
      [0, 100],
      [200, 300],
    ]);
  });
});
