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
  const palette = Array.from({ length: SCALE_STEPS }, (_, k) =>
    sequentialColour(k / (SCALE_STEPS - 1), scale),
  );
  palette.push(NO_VALUE_COLOUR);
  const index = Uint16Array.from(boxValues, (value) => {
    const t = normalise(value);
    return Number.isNaN(t) ? SCALE_STEPS : Math.round(t * (SCALE_STEPS - 1));
  });
  return { palette, index };
}
