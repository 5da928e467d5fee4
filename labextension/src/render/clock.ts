/**
 * The inspector's one clock, and the words every view says it in. Every time a view shows is a
 * run's own time: nanoseconds since that run's first op or transfer started (its "step" starts
 * there and ends at its last one's end), modeled (a simulated GPU, a what-if) or measured (a
 * clock, CUDA events). With all runs shown, the clock is the first run's: later runs read the
 * time since it started. The header, the scrubber and both plots' axes take their origin and
 * their words from here, so they agree on a step's length; a run's wall-clock time (its record,
 * Python's overhead included) is only ever shown as "wall clock".
 */
import { formatNs } from './format';
import type { PlacementStore } from './store';
import { TimingSource, type RunRecord } from './types';

/** Which kind of time a run's events carry. */
export type ClockKind = 'modeled' | 'measured' | 'modeled and measured' | null;

export interface RunClock {
  /** The run whose start is 0 (its id); null without runs' activity. */
  readonly run: number | null;
  /** Where 0 is: the run's first op or transfer start, ns since the document's origin. */
  readonly origin: number;
  /** The run's step (first op or transfer start to last end), ns; null without activity. */
  readonly step: number | null;
  /** The kind of time of the run's events (of all runs' when the clock spans them). */
  readonly kind: ClockKind;
  /** Whether the clock covers every run (their idle gaps collapse on the axes). */
  readonly allRuns: boolean;
}

const MEASURED = (1 << TimingSource.CLOCK) | (1 << TimingSource.CUDA_EVENT);
const MODELED = 1 << TimingSource.MODELED;

/** The kind of time a bit set of timing sources (1 << code) stands for. */
export function clockKind(sources: number): ClockKind {
  const modeled = (sources & MODELED) !== 0;
  const measured = (sources & MEASURED) !== 0;
  return modeled && measured
    ? 'modeled and measured'
    : modeled
      ? 'modeled'
      : measured
        ? 'measured'
        : null;
}

/**
 * The clock of run `run` (its id), or with null the first run's, which every run is read on.
 * A run without op or transfer events starts at its record's start.
 */
export function runClock(store: PlacementStore, run: number | null): RunClock {
  const activity = store.activity();
  let id = run;
  if (id === null) {
    let first = Infinity;
    for (const [r, span] of activity.spans) {
      if (r >= 0 && span[0] < first) {
        first = span[0];
        id = r;
      }
    }
  }
  let sources = 0;
  if (run === null) {
    for (const [r, bits] of activity.sources) {
      sources |= r >= 0 ? bits : 0;
    }
  } else {
    sources = activity.sources.get(run) ?? 0;
  }
  const span = id === null ? undefined : activity.spans.get(id);
  const record = id === null ? undefined : store.runs.find((r) => r.id === id);
  const origin =
    span?.[0] ??
    (record === undefined
      ? (activity.activeExtent?.[0] ?? activity.extent?.[0] ?? 0)
      : record.t0 - store.originNs);
  return {
    run: id,
    origin,
    step: span === undefined ? null : span[1] - span[0],
    kind: clockKind(sources),
    allRuns: run === null,
  };
}

/** "run 3" (runs are numbered from 1 by id). */
export function runName(id: number): string {
  return `run ${id + 1}`;
}

/** " (modeled)", " (measured)", or '' when the kind is unknown. */
export function kindSuffix(kind: ClockKind): string {
  return kind === null ? '' : ` (${kind})`;
}

/** "since run 3 started": what a time on this clock counts from. */
export function sinceWords(clock: RunClock): string {
  return clock.run === null ? 'since the first event' : `since ${runName(clock.run)} started`;
}

/** About how wide a character of an 11 px axis title is (px), generously. */
const TITLE_CHAR_PX = 7;

/**
 * The x axis title, the longest of its wordings that fits `widthPx`: "time since run 3 started
 * (modeled)", with ", idle gaps collapsed" when the axis collapses the gaps between runs.
 */
export function axisTitle(clock: RunClock, collapsed: boolean, widthPx = Infinity): string {
  const kind = kindSuffix(clock.kind);
  const since = sinceWords(clock);
  const gaps = collapsed ? ', idle gaps between runs collapsed' : '';
  const short = collapsed ? ', gaps collapsed' : '';
  const run = clock.run === null ? '' : ` from ${runName(clock.run)}`;
  const options = [
    `time ${since}${gaps}${kind}`,
    `time ${since}${short}${kind}`,
    `time${run}${short}${kind}`,
    `time${run}${kind}`,
    'time',
  ];
  return options.find((o) => o.length * TITLE_CHAR_PX <= widthPx) ?? 'time';
}

/** "step 5.0 µs (modeled)": a run's step on its own clock; '' without one. */
export function stepWords(clock: RunClock): string {
  return clock.step === null ? '' : `step ${formatNs(clock.step)}${kindSuffix(clock.kind)}`;
}

/** "1.2 µs since run 3 started": a time on the clock (t: ns since the document's origin). */
export function timeWords(clock: RunClock, t: number): string {
  return `${formatNs(t - clock.origin)} ${sinceWords(clock)}`;
}

/**
 * "run 3 of 9 · ok · step 5.0 µs (modeled) · wall clock 37.8 µs": a run's status, its step on its
 * clock, and how long its record says the session took (the wall clock, Python's overhead and
 * all), which only a run without op events is summed up by. A dry run says so after its name
 * ("run 2 of 2 · dry run, shapes only · ok · …"): nothing it shows was computed.
 */
export function runLine(record: RunRecord, count: number, clock: RunClock | null): string {
  const wall = `wall clock ${formatNs(Math.max(0, record.t1 - record.t0))}`;
  const step = clock === null || clock.run !== record.id ? '' : stepWords(clock);
  const dry = record.dry === true ? ' · dry run, shapes only' : '';
  return `${runName(record.id)} of ${count}${dry} · ${record.status} · ${step ? `${step} · ` : ''}${wall}`;
}
