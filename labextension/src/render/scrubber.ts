/**
 * The scrubber: a time slider over the recorded events, play/pause, and (with several runs) a run
 * selector. It writes `state.time` (ns since origin; null means "the end": everything done).
 *
 * The slider spans [0, store.endTime()]; playing starts over from the first run, op or transfer
 * (events often begin well after the origin) and takes PLAY_MS from there to the end. Picking a run
 * narrows the slider and playback to that run's span and moves the time to the run's end; "all
 * runs" restores the whole range and the end state.
 */
import { element } from './dom';
import { formatNs } from './format';
import { timeExtent } from './panel';
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

/** "run 3 of 9 · ok · 1.20 ms" for each run (numbered from 1 by id), with its span relative to
 * the origin. */
export function runSpans(runs: readonly RunRecord[], originNs: number): RunSpan[] {
  const count = runsMade(runs);
  return runs.map((run) => {
    const start = run.t0 - originNs;
    const end = Math.max(start, run.t1 - originNs);
    return {
      id: run.id,
      start,
      end,
      label: `run ${run.id + 1} of ${count} · ${run.status} · ${formatNs(end - start)}`,
    };
  });
}

export class Scrubber {
  readonly element: HTMLDivElement;
  readonly input: HTMLInputElement;
  readonly playButton: HTMLButtonElement;
  readonly label: HTMLSpanElement;
  readonly runSelect: HTMLSelectElement;
  private range: [number, number] = [0, 0];
  private selectedRun: number | null = null;
  private spans: RunSpan[] = [];
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
    this.element.append(this.playButton, this.input, this.label, this.runSelect);
    parent.appendChild(this.element);

    this.input.addEventListener('input', () => {
      const value = Number(this.input.value); // read before pause() re-renders the slider
      this.pause();
      this.setTime(value);
    });
    this.playButton.addEventListener('click', () => {
      if (this.playing) {
        this.pause();
      } else {
        this.play();
      }
    });
    this.runSelect.addEventListener('change', () => this.selectRun(this.runSelect.value));
    this.unlisten = state.listen((changed) => this.onState(changed));
    this.update();
  }

  get playing(): boolean {
    return this.frame !== null;
  }

  /** The slider's range, ns since origin. */
  get timeRange(): [number, number] {
    return [this.range[0], this.range[1]];
  }

  /** The store changed: new end time, new runs. */
  update(): void {
    if (this.disposed) {
      return;
    }
    this.spans = runSpans(this.store.runs, this.store.originNs);
    this.renderRuns();
    const run = this.spans.find((s) => String(s.id) === String(this.selectedRun));
    if (run === undefined) {
      this.selectedRun = null;
    }
    this.range = run ? [run.start, run.end] : [0, Math.max(0, this.store.endTime())];
    this.input.min = String(this.range[0]);
    this.input.max = String(this.range[1]);
    this.input.disabled = this.range[1] <= this.range[0];
    this.playButton.disabled = this.input.disabled;
    this.render();
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

  play(): void {
    if (this.playing || this.disposed || this.range[1] <= this.range[0]) {
      return;
    }
    const [lo, hi] = this.range;
    const current = this.state.get('time');
    // From the first activity when starting over: the slider begins at 0, the events may not.
    const first = this.selectedRun === null ? (timeExtent(this.store.events)?.[0] ?? lo) : lo;
    let start = current === null || current >= hi ? Math.max(lo, first) : Math.max(lo, current);
    const rate = (hi - Math.max(lo, first)) / PLAY_MS;

    let last: number | null = null;
    const step = (now: number) => {
      if (this.disposed) {
        return;
      }
      if (last !== null) {
        start += (now - last) * rate;
      }
      last = now;
      if (start >= hi) {
        this.frame = null;
        // At the end: "all runs" returns to the end state; a run stays at its end.
        this.state.set({ time: this.selectedRun === null ? null : hi });
        this.render();
        return;
      }
      this.state.set({ time: start });
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
    const run = this.spans.find((s) => String(s.id) === value);
    this.selectedRun = run ? run.id : null;
    this.update();
    this.state.set({ time: run ? run.end : null });
  }

  private renderRuns(): void {
    const spans = this.spans;
    const listed = `${spans[0]?.id}:${spans[spans.length - 1]?.id}:${spans.length}`;
    if (listed === this.listed) {
      this.runSelect.value = this.selectedRun === null ? '' : String(this.selectedRun);
      return; // a live update without new runs: a thousand options are not rebuilt each time
    }
    this.listed = listed;
    const doc = this.element.ownerDocument;
    this.runSelect.hidden = this.spans.length < 2;
    const options: HTMLOptionElement[] = [];
    const all = doc.createElement('option');
    all.value = '';
    all.textContent = `all runs (${this.spans.length})`;
    options.push(all);
    for (const span of this.spans) {
      const option = doc.createElement('option');
      option.value = String(span.id);
      option.textContent = visibleText(span.label);
      options.push(option);
    }
    this.runSelect.replaceChildren(...options);
    this.runSelect.value = this.selectedRun === null ? '' : String(this.selectedRun);
  }

  private onState(changed: ReadonlySet<keyof ViewStateFields>): void {
    if (changed.has('time')) {
      this.render();
    }
  }

  private render(): void {
    const time = this.state.get('time');
    const [lo, hi] = this.range;
    const shown = time === null ? hi : Math.min(hi, Math.max(lo, time));
    this.input.value = String(shown);
    this.label.textContent =
      time === null ? `end · ${formatNs(hi)}` : `${formatNs(time)} / ${formatNs(hi)}`;
    const playing = this.playing;
    this.playButton.textContent = playing ? '❚❚' : '▶';
    this.playButton.title = playing ? 'Pause' : 'Play';
    this.playButton.setAttribute('aria-label', playing ? 'Pause' : 'Play');
    this.playButton.setAttribute('aria-pressed', String(playing));
  }
}
