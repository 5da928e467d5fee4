/**
 * The fill of every DAG box in the current colour mode, as an index into a short palette: the
 * painter then sets each fill style once and draws all boxes of that colour together.
 */
import {
  MIXED_COLOUR,
  NO_VALUE_COLOUR,
  STATE_COLOURS,
  UNPLACED_COLOUR,
  devicePalette,
  logNormalizer,
  sequentialColour,
  type SequentialScale,
} from './colours';
import type { DagModel } from './dagmodel';
import { DONE, FAILED, IDLE, OP_STATES, RUNNING, WAITING } from './opstate';
import { MIXED } from './scopes';
import type { PlacementStore } from './store';
import type { ColourMode } from './types';

export interface BoxColours {
  palette: string[];
  /** Per box, an index into `palette`. */
  index: Uint16Array;
  /** For the time and memory scales: the smallest and largest value (NaN when none). */
  range?: [number, number];
}

const SCALE_STEPS = 256;

export function colourBoxes(
  model: DagModel,
  store: PlacementStore,
  mode: ColourMode,
  time: number | null,
): BoxColours {
  switch (mode) {
    case 'state':
      return byState(model, store, time);
    case 'time':
      return byValue(model, opDurations(store), 'time');
    case 'memory':
      return byValue(
        model,
        Float64Array.from(store.nodes, (n) => (n.bytes_out === null ? NaN : n.bytes_out)),
        'memory',
      );
    default:
      return byDevice(model, store);
  }
}

function byDevice(model: DagModel, store: PlacementStore): BoxColours {
  const styles = devicePalette(store.devices);
  const palette = [UNPLACED_COLOUR, MIXED_COLOUR];
  const slot = new Map<number, number>();
  for (const device of store.devices) {
    slot.set(device.id, palette.push(styles.get(device.id)?.colour ?? MIXED_COLOUR) - 1);
  }
  const index = Uint16Array.from(model.folded.boxes, (box) =>
    box.device === MIXED ? 1 : box.device === null ? 0 : (slot.get(box.device) ?? 0),
  );
  return { palette, index };
}

/** How a folded box's ops combine: a failure shows first, then activity, then completion. */
const STATE_PRIORITY = new Uint8Array(OP_STATES.length);
STATE_PRIORITY[IDLE] = 0;
STATE_PRIORITY[DONE] = 1;
STATE_PRIORITY[WAITING] = 2;
STATE_PRIORITY[RUNNING] = 3;
STATE_PRIORITY[FAILED] = 4;

function byState(model: DagModel, store: PlacementStore, time: number | null): BoxColours {
  const states = new Uint8Array(store.nodes.length);
  store.stateAt(time, states);
  const { opStart, opList } = model;
  const index = new Uint16Array(model.folded.boxes.length);
  for (let b = 0; b < index.length; b++) {
    let best = IDLE;
    for (let k = opStart[b]; k < opStart[b + 1]; k++) {
      const state = states[opList[k]];
      if (STATE_PRIORITY[state] > STATE_PRIORITY[best]) {
        best = state;
      }
    }
    index[b] = best;
  }
  return { palette: OP_STATES.map((s) => STATE_COLOURS[s]), index };
}

/** Each op's latest duration in ns, NaN when it never ran. */
function opDurations(store: PlacementStore): Float64Array {
  const { t0, t1 } = store.opSpans();
  return Float64Array.from(t0, (start, i) => t1[i] - start);
}

/** Boxes on a log scale of a per-op value; a folded box sums its ops' values. */
function byValue(model: DagModel, values: Float64Array, scale: SequentialScale): BoxColours {
  const { opStart, opList } = model;
  const boxValues = new Float64Array(model.folded.boxes.length);
  for (let b = 0; b < boxValues.length; b++) {
    let sum = NaN;
    for (let k = opStart[b]; k < opStart[b + 1]; k++) {
      const value = values[opList[k]];
      if (!Number.isNaN(value)) {
        sum = Number.isNaN(sum) ? value : sum + value;
      }
    }
    boxValues[b] = sum;
  }
  const normalise = logNormalizer(boxValues);
  let low = Infinity;
  let high = -Infinity;
  for (const value of boxValues) {
    if (value > 0) {
      low = Math.min(low, value);
      high = Math.max(high, value);
    }
  }
  const palette = Array.from({ length: SCALE_STEPS }, (_, k) =>
    sequentialColour(k / (SCALE_STEPS - 1), scale),
  );
  palette.push(NO_VALUE_COLOUR);
  const index = Uint16Array.from(boxValues, (value) => {
    const t = normalise(value);
    return Number.isNaN(t) ? SCALE_STEPS : Math.round(t * (SCALE_STEPS - 1));
  });
  return { palette, index, range: low <= high ? [low, high] : [NaN, NaN] };
}

/** Per box, what the run in flight is doing there (progressMarks). */
export const LIVE_NONE = 0;
export const LIVE_WAITING = 1;
export const LIVE_DONE = 2;
export const LIVE_RUNNING = 3;

/** Opacity of a box the filter leaves out, and of one whose ops wait in the run in flight. */
export const FILTERED_ALPHA = 0.15;
export const WAITING_ALPHA = 0.35;

/**
 * Per box, the mark of the run in flight (null when none is): LIVE_RUNNING when one of its ops runs
 * now, else LIVE_DONE when one has finished in this run, else LIVE_WAITING when it has ops of the
 * run and none has started; LIVE_NONE for boxes without ops in the run.
 */
export function progressMarks(model: DagModel, store: PlacementStore): Uint8Array | null {
  const live = store.progress;
  if (live === null) {
    return null;
  }
  const marks = new Uint8Array(model.folded.boxes.length);
  const mark = (ids: readonly number[], value: number) => {
    for (const id of ids) {
      const node = store.nodeIndex(id);
      const box = node < 0 ? -1 : model.folded.boxOf[node];
      if (box >= 0 && box < marks.length && marks[box] < value) {
        marks[box] = value;
      }
    }
  };
  // Marked in rising order of precedence: waiting < done < running.
  mark(live.waiting, LIVE_WAITING);
  mark(live.done, LIVE_DONE);
  mark(live.running, LIVE_RUNNING);
  return marks;
}

/**
 * A box's opacity: faint when the filter leaves it out or its ops were not executed in the run
 * shown (a cond's branch not taken), faded while its ops wait in the run in flight, else opaque.
 * `filtered` is the filter's mark (1: left out), `live` the progress mark, `notRun` 1 for a
 * branch not taken.
 */
export function boxAlpha(filtered: number, live: number, notRun = 0): number {
  if (filtered === 1 || notRun === 1) {
    return FILTERED_ALPHA;
  }
  return live === LIVE_WAITING ? WAITING_ALPHA : 1;
}
