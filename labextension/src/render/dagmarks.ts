/**
 * Every mark the DAG draws besides its fill colours, declared once: how dagpaint strokes it (a
 * width in CSS px and a dash pattern), what the key under the toolbar calls it, and whether a
 * graph uses it (marksUsed). The key (dagkey.ts) lists exactly the marks the graph in view
 * uses, drawn from these same styles, so a mark is never drawn unexplained.
 */
import { LIVE_RUNNING } from './dagcolour';
import type { FlowMarks } from './dagflow';
import type { DagModel } from './dagmodel';
import type { DagTheme } from './dagpaint';

/** A stroke: its width (CSS px at any zoom) and dash pattern (CSS px; [] solid). */
export interface Stroke {
  readonly width: number;
  readonly dash: readonly number[];
}

export type MarkId =
  | 'tensor'
  | 'control'
  | 'transfer'
  | 'network'
  | 'side-link'
  | 'simulated'
  | 'folded'
  | 'series'
  | 'opened'
  | 'loop'
  | 'not-run'
  | 'failed'
  | 'mismatch'
  | 'marked'
  | 'running';

export interface Mark {
  readonly id: MarkId;
  /** An edge (drawn as a line in the key) or a box's outline (a small box). */
  readonly shape: 'line' | 'box';
  readonly stroke: Stroke;
  /** The theme colour it is drawn in. */
  readonly colour: keyof DagTheme;
  readonly text: string;
}

/** The marks in the order the key lists them. */
export const MARKS: readonly Mark[] = [
  { id: 'tensor', shape: 'line', stroke: { width: 1.2, dash: [] }, colour: 'edge', text: 'tensor' },
  {
    id: 'control',
    shape: 'line',
    stroke: { width: 1, dash: [1.5, 3] },
    colour: 'edge',
    text: 'control dependency',
  },
  {
    id: 'transfer',
    shape: 'line',
    stroke: { width: 2.5, dash: [7, 4] },
    colour: 'transfer',
    text: 'transfer between devices (bytes)',
  },
  {
    id: 'network',
    shape: 'line',
    stroke: { width: 4, dash: [1.5, 3.5] },
    colour: 'transfer',
    text: 'between tasks (network)',
  },
  {
    id: 'side-link',
    shape: 'line',
    stroke: { width: 1.5, dash: [4, 3] },
    colour: 'muted',
    text: 'link to a group set aside',
  },
  {
    id: 'simulated',
    shape: 'box',
    stroke: { width: 1.5, dash: [5, 3] },
    colour: 'foreground',
    text: 'dashed: on a simulated device',
  },
  {
    id: 'folded',
    shape: 'box',
    stroke: { width: 2, dash: [] },
    colour: 'foreground',
    text: 'folded scope (+ opens; bar: its devices)',
  },
  {
    id: 'series',
    shape: 'box',
    stroke: { width: 1, dash: [] },
    colour: 'foreground',
    text: 'series of alike scopes',
  },
  {
    id: 'opened',
    shape: 'box',
    stroke: { width: 1.5, dash: [] },
    colour: 'muted',
    text: 'opened scope (− folds)',
  },
  {
    id: 'loop',
    shape: 'box',
    stroke: { width: 3, dash: [] },
    colour: 'loop',
    text: 'while loop (its iterations in the run shown)',
  },
  {
    id: 'not-run',
    shape: 'box',
    stroke: { width: 1.5, dash: [2, 3] },
    colour: 'muted',
    text: 'faint: not executed in the run shown (cond branch not taken)',
  },
  {
    id: 'failed',
    shape: 'box',
    stroke: { width: 4, dash: [] },
    colour: 'mismatch',
    text: 'failed / not placed',
  },
  {
    id: 'mismatch',
    shape: 'box',
    stroke: { width: 2.5, dash: [] },
    colour: 'mismatch',
    text: 'not on the device it asked for',
  },
  {
    id: 'marked',
    shape: 'box',
    stroke: { width: 2.5, dash: [] },
    colour: 'marked',
    text: 'moved in the other placement',
  },
  {
    id: 'running',
    shape: 'box',
    stroke: { width: 4, dash: [] },
    colour: 'running',
    text: 'running now',
  },
];

const BY_ID = new Map(MARKS.map((mark) => [mark.id, mark]));

/** The mark `id`: its stroke, colour and text. */
export function mark(id: MarkId): Mark {
  return BY_ID.get(id) as Mark;
}

/** What the view knows besides the model: per box, failures, marked ops, the run in flight. */
export interface MarkState {
  alerts: Uint8Array | null;
  marked: Uint8Array | null;
  live: Uint8Array | null;
  /** Loops and ops not executed in the run shown (dagflow.ts); null: no control flow. */
  flow?: FlowMarks | null;
}

/** The marks a paint of `model` draws (side links and edges as drawn, not those summarized). */
export function marksUsed(model: DagModel, state: MarkState): Set<MarkId> {
  const used = new Set<MarkId>();
  const { edges, boxes, containers } = model.folded;
  const { aside, rootItem, links } = model.layout;
  for (const edge of edges) {
    const a = rootItem[edge.src];
    const b = rootItem[edge.dst];
    if (a !== b && (aside[a] === 1 || aside[b] === 1)) {
      continue; // drawn as a side link
    }
    used.add(
      edge.control ? 'control' : !edge.crosses ? 'tensor' : edge.network ? 'network' : 'transfer',
    );
  }
  if (links.length > 0) {
    used.add('side-link');
  }
  boxes.forEach((box, b) => {
    if (box.node >= 0) {
      if (model.simulated[b] === 1) {
        used.add('simulated');
      }
    } else {
      used.add('folded');
      if (model.hierarchy.groups[box.group].series > 0) {
        used.add('series');
      }
    }
  });
  if (containers.length > 0) {
    used.add('opened');
  }
  const flow = state.flow;
  if (flow && (flow.loopBoxes.some(Boolean) || flow.loopContainers.some(Boolean))) {
    used.add('loop');
  }
  const any = (marks: Uint8Array | null, value = 1) => marks?.includes(value) ?? false;
  if (any(flow?.notRun ?? null)) {
    used.add('not-run');
  }
  if (any(state.alerts)) {
    used.add('failed');
  }
  if (any(model.mismatch)) {
    used.add('mismatch');
  }
  if (any(state.marked)) {
    used.add('marked');
  }
  if (any(state.live, LIVE_RUNNING)) {
    used.add('running');
  }
  return used;
}
