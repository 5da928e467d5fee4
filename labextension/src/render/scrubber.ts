/**
 * The scrubber: a time slider over the recorded activity, play/pause, and (with several runs) the
 * run picker. It writes `state.time` (ns since origin; null means "the end": everything done) and
 * `state.run` (the picked run; null: all runs).
 *
 * The slider spans the selected run's active span (its first op or transfer start to its last
 * one's end), or with all runs the runs' active spans with the idle gaps between them collapsed
 * (the timeline's axis, timeaxis.ts): a loop whose runs last microseconds and idle milliseconds
 * plays through its activity, not its idle time. Playing takes PLAY_MS whatever the length.
 * Picking a run moves the time to the run's end; "all runs" restores the end state.
 */
import { element } from './dom';
import { runClock, runLine, sinceWords, type RunClock } from './clock';
import { formatNs } from './format';
import type { TimeAxis } from './timeaxis';
import type { View, ViewChange } from './view';
import type { ViewState, ViewStateFields } from './viewstate';
import { runsMade, type PlacementStore } from './store';
import type { RunRecord } from './types';
import { visibleText } from './visible';

/** How long playing through the whole range takes. */
export const PLAY_MS = 5000;

export interface RunSpan {
  id: number;
  start: number;
  end: number;
  label: string;
}

/** How many runs the picker lists (the newest): the others are reached by number. */
export const RUN_OPTIONS = 30;

/**
 * A run's record span relative to the origin, and its picker label, "run 3 of 9 · ok · step
 * 1.20 ms (modeled) · wall clock 3.1 ms" (clock.ts's runLine; the step when `clock` is given).
 */
export function runSpan(
  run: RunRecord,
  count: number,
  originNs: number,
  clock: RunClock | null = null,
): RunSpan {
  const start = run.t0 - originNs;
  const end = Math.max(start, run.t1 - originNs);
  return { id: run.id, start, end, label: runLine(run, count, clock) };
}

/** The record of run `id` in `runs` (sorted by id); undefined when it is not listed. */
export function findRun(runs: readonly RunRecord[], id: number): RunRecord | undefined {
  let lo = 0;
  let hi = runs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid].id < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return runs[lo]?.id === id ? runs[lo] : undefined;
}

export class Scrubber implements View {
  readonly element: HTMLDivElement;
  readonly input: HTMLInputElement;
  readonly playButton: HTMLButtonElement;
  readonly label: HTMLSpanElement;
  readonly runSelect: HTMLSelectElement;
  /** Any listed run by number, beyond the newest RUN_OPTIONS the select lists. */
  readonly runNumber: HTMLInputElement;
  /** The range in real time (ns since origin) and along the axis (display ns). */
  private range: [number, number] = [0, 0];
  private shown: [number, number] = [0, 0];
  private axis: TimeAxis | null = null;
  private listed = ''; // which runs the select lists: records never change, so ids and count
  private frame: number | null = null;
  private disposed = false;
  private readonly unlisten: () => void;

  constructor(
    parent: HTMLElement,
    private readonly store: PlacementStore,
    private readonly state: ViewState,
  ) {
    const doc = parent.ownerDocument;
    this.element = element(doc, 'div', 'placeviz-scrubber');
    this.playButton = element(doc, 'button', 'placeviz-play');
    this.playButton.type = 'button';
    this.input = element(doc, 'input', 'placeviz-time');
    this.input.type = 'range';
    this.input.step = 'any';
    this.input.setAttribute('aria-label', 'Time');
    this.label = element(doc, 'span', 'placeviz-time-label');
    this.runSelect = element(doc, 'select', 'placeviz-run');
    this.runSelect.setAttribute('aria-label', 'Run');
    this.runNumber = element(doc, 'input', 'placeviz-run-number');
    this.runNumber.type = 'number';
    this.runNumber.step = '1';
    this.runNumber.placeholder = 'run #';
    this.runNumber.setAttribute('aria-label', 'Run number');
    this.element.append(this.playButton, this.input, this.label, this.runSelect, this.runNumber);
    parent.appendChild(this.element);

    this.input.addEventListener('input', () => {
      const value = Number(this.input.value); // read before pause() re-renders the slider
      this.pause();
      this.setShown(value);
    });
    this.playButton.addEventListener('click', () => {
      if (this.playing) {
        this.pause();
      } else {
        this.play();
      }
    });
    this.runSelect.addEventListener('change', () => this.selectRun(this.runSelect.value));
    this.runNumber.addEventListener('change', () => {
      const number = Number(this.runNumber.value);
      this.selectRun(Number.isInteger(number) && number >= 1 ? String(number - 1) : '');
    });
    this.element.dataset.rangeStart = '0';
    this.element.dataset.rangeEnd = '0';
    this.unlisten = state.listen((changed) => this.onState(changed));
    this.follow();
  }

  get playing(): boolean {
    return this.frame !== null;
  }

  /** The slider's range, ns since origin. */
  get timeRange(): [number, number] {
    return [this.range[0], this.range[1]];
  }

  private get selectedRun(): number | null {
    return this.state.get('run');
  }

  /** The store changed: new activity, new runs (the run in flight is not shown here). */
  update(change: ViewChange): void {
    if (change.tables || change.events) {
      this.follow();
    }
  }

  /** Take the range and the run list from the store and the picked run. */
  private follow(): void {
    if (this.disposed) {
      return;
    }
    this.renderRuns();
    const activity = this.store.activity();
    const axis = activity.timeAxis;
    this.axis = axis;
    const selected = this.selectedRun;
    const listed = selected === null ? undefined : findRun(this.store.runs, selected);
    const record = listed && runSpan(listed, runsMade(this.store.runs), this.store.originNs);
    const active = selected === null ? undefined : activity.spans.get(selected);
    if (selected !== null && active === undefined && record === undefined) {
      this.state.set({ run: null }); // a run no longer listed nor in the events
      return;
    }
    let range: [number, number];
    if (active !== undefined) {
      range = [active[0], active[1]];
    } else if (record !== undefined) {
      range = [record.start, record.end];
    } else {
      range = activity.activeExtent ?? [0, Math.max(0, this.store.endTime())];
    }
    this.range = range;
    // A selected run is one window: along the axis it is the same length as in real time.
    this.shown =
      selected === null && axis.extent !== null
        ? axis.extent
        : [axis.toShown(range[0]), axis.toShown(range[0]) + (range[1] - range[0])];
    this.element.dataset.rangeStart = String(range[0]);
    this.element.dataset.rangeEnd = String(range[1]);
    this.input.min = String(this.shown[0]);
    this.input.max = String(this.shown[1]);
    this.input.disabled = this.shown[1] <= this.shown[0];
    this.playButton.disabled = this.input.disabled;
    this.render();
  }

  /** Real time of a slider position. */
  private toReal(x: number): number {
    if (this.selectedRun !== null || this.axis === null) {
      return this.range[0] + (x - this.shown[0]);
    }
    return this.axis.toReal(x);
  }

  /** Slider position of a real time. */
  private toShown(t: number): number {
    if (this.selectedRun !== null || this.axis === null) {
      return this.shown[0] + (t - this.range[0]);
    }
    return this.axis.toShown(t);
  }

  /** Set the time: clamped to the range; the range's end of "all runs" is null (the end). */
  setTime(t: number): void {
    const [lo, hi] = this.range;
    if (!Number.isFinite(t) || (this.selectedRun === null && t >= hi)) {
      this.state.set({ time: null });
      return;
    }
    this.state.set({ time: Math.min(hi, Math.max(lo, t)) });
  }

  /** Set the time from a slider position. */
  private setShown(x: number): void {
    if (this.selectedRun === null && x >= this.shown[1]) {
      this.state.set({ time: null });
      return;
    }
    this.setTime(this.toReal(Math.min(this.shown[1], Math.max(this.shown[0], x))));
  }

  play(): void {
    if (this.playing || this.disposed || this.shown[1] <= this.shown[0]) {
      return;
    }
    const [lo, hi] = this.shown;
    const current = this.state.get('time');
    let at =
      current === null || current >= this.range[1] ? lo : Math.max(lo, this.toShown(current));
    const rate = (hi - lo) / PLAY_MS;

    let last: number | null = null;
    const step = (now: number) => {
      if (this.disposed) {
        return;
      }
      if (last !== null) {
        at += (now - last) * rate;
      }
      last = now;
      if (at >= hi) {
        this.frame = null;
        // At the end: "all runs" returns to the end state; a run stays at its end.
        this.state.set({ time: this.selectedRun === null ? null : this.range[1] });
        this.render();
        return;
      }
      this.state.set({ time: this.toReal(at) });
      this.frame = requestAnimationFrame(step);
    };
    this.frame = requestAnimationFrame(step);
    this.render();
  }

  pause(): void {
    if (this.frame !== null) {
      cancelAnimationFrame(this.frame);
      this.frame = null;
      this.render();
    }
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.pause();
    this.disposed = true;
    this.unlisten();
    this.element.remove();
  }

  private selectRun(value: string): void {
    this.pause();
    const id = value === '' ? NaN : Number(value);
    const run = Number.isInteger(id) ? findRun(this.store.runs, id) : undefined;
    this.state.set({ run: run ? run.id : null });
    this.state.set({ time: run ? this.range[1] : null });
  }

  private renderRuns(): void {
    const runs = this.store.runs;
    const selected = this.selectedRun;
    const listed = `${runs[0]?.id}:${runs[runs.length - 1]?.id}:${runs.length}:${selected}`;
    if (listed !== this.listed) {
      // New runs (or a run picked beyond the newest): a few dozen options, however long the loop.
      this.listed = listed;
      const doc = this.element.ownerDocument;
      const count = runsMade(runs);
      const shown = runs.slice(-RUN_OPTIONS);
      const picked = selected === null ? undefined : findRun(runs, selected);
      if (picked !== undefined && !shown.includes(picked)) {
        shown.unshift(picked);
      }
      const all = doc.createElement('option');
      all.value = '';
      all.textContent = `all runs (${runs.length})`;
      const options = shown.map((run) => {
        const option = doc.createElement('option');
        option.value = String(run.id);
        const clock = runClock(this.store, run.id);
        option.textContent = visibleText(runSpan(run, count, this.store.originNs, clock).label);
        return option;
      });
      this.runSelect.replaceChildren(all, ...options);
      this.runSelect.hidden = runs.length < 2;
      this.runNumber.hidden = runs.length <= RUN_OPTIONS;
      this.runNumber.min = String((runs[0]?.id ?? 0) + 1);
      this.runNumber.max = String(count);
    }
    this.runSelect.value = selected === null ? '' : String(selected);
    this.runNumber.value = selected === null ? '' : String(selected + 1);
  }

  private onState(changed: ReadonlySet<keyof ViewStateFields>): void {
    if (changed.has('run')) {
      this.follow();
    } else if (changed.has('time')) {
      this.render();
    }
  }

  private render(): void {
    const time = this.state.get('time');
    const [lo, hi] = this.range;
    const shown = time === null ? hi : Math.min(hi, Math.max(lo, time));
    this.input.value = String(time === null ? this.shown[1] : this.toShown(shown));
    // On the clock the plots read (clock.ts): the picked run's, else the first run's.
    const clock = runClock(this.store, this.selectedRun);
    const since = sinceWords(clock);
    this.element.dataset.clockOrigin = String(clock.origin);
    this.label.textContent =
      time === null
        ? `end · ${formatNs(hi - clock.origin)} ${since}`
        : `${formatNs(time - clock.origin)} / ${formatNs(hi - clock.origin)} ${since}`;
    const playing = this.playing;
    this.playButton.textContent = playing ? '❚❚' : '▶';
    this.playButton.title = playing ? 'Pause' : 'Play';
    this.playButton.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    this.playButton.setAttribute('aria-pressed', String(playing));
  }
}
