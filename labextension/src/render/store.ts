/**
 * The placement document a view shows, kept current by live messages. The inspector listens for
 * changes and hands them to the views; what the store derives from the events (op spans, states)
 * is folded in from a cursor when read, so it costs the events added since.
 */
import { RunActivity } from './activity';
import { EventColumns, MAX_EVENTS } from './events';
import { normalizeDocument, normalizeTables } from './normalize';
import { DONE, OpTimeline, RUNNING, WAITING, type OpSpans } from './opstate';
import {
  COLUMN_NAMES,
  EVENT_KIND_LABELS,
  EventKind,
  TIMING_SOURCE_LABELS,
  type CodeTable,
  type DeviceRecord,
  type EdgeRecord,
  type EventBatch,
  type EventLists,
  type NodeRecord,
  type PlacementDocument,
  type RunRecord,
  type Tables,
} from './types';

export { OP_STATES, type OpSpans } from './opstate';

/** Runs the session made, listed or not: run ids count from 0 (older records may be dropped). */
export function runsMade(runs: readonly RunRecord[]): number {
  return runs.length === 0 ? 0 : runs[runs.length - 1].id + 1;
}

/**
 * What changed: the graph tables (views lay out again), the events (views recolour), or only the
 * snapshot of the run in flight (views repaint their live marks and the header; nothing derived
 * from the events changes).
 */
export const STORE_CHANGES = ['tables', 'events', 'progress'] as const;
export type StoreChange = (typeof STORE_CHANGES)[number];

/**
 * The run in flight (a live update's `progress`): the node ids of its plan not started yet, running
 * now and finished. A snapshot replaces the previous one whole.
 */
export interface RunProgress {
  readonly run: number;
  readonly waiting: readonly number[];
  readonly running: readonly number[];
  readonly done: readonly number[];
}

export class PlacementStore {
  readonly schema: string;
  readonly events: EventColumns;
  private tables: Tables;
  private readonly runActivity = new RunActivity();
  private nodeIndexById = new Map<number, number>();
  private nodeIndexByNameMap = new Map<string, number>();
  private deviceIndexById = new Map<number, number>();
  private listeners = new Set<(change: StoreChange) => void>();
  /** Op spans and states, folded in from a cursor; null until read or after the nodes changed. */
  private timeline: OpTimeline | null = null;
  private liveRun: RunProgress | null = null;
  private skipped = 0;
  private whatIf: string | null = null;

  private constructor(schema: string, tables: Tables, maxEvents: number) {
    this.events = new EventColumns(maxEvents);
    this.schema = schema;
    this.tables = tables;
    this.index();
  }

  /**
   * A store for a document of any schema version; throws when devices or nodes are missing. It
   * holds at most `maxEvents` events (the kernel recorder's limit), dropping the oldest.
   */
  static fromDocument(doc: unknown, maxEvents: number = MAX_EVENTS): PlacementStore {
    const normalized = normalizeDocument(doc);
    const store = new PlacementStore(normalized.schema, normalized.tables, maxEvents);
    store.events.appendLists(normalized.events);
    store.whatIf = normalized.prediction;
    return store;
  }

  /**
   * The what-if question when the document is a prediction (its times are modeled by the cost
   * model, not measured); null for a measured trace.
   */
  get prediction(): string | null {
    return this.whatIf;
  }

  /** Say whether the document is a prediction (a widget's document replaced in place). */
  setPrediction(prediction: string | null): void {
    if (prediction !== this.whatIf) {
      this.whatIf = prediction;
      this.changed('tables');
    }
  }

  get originNs(): number {
    return this.tables.origin_ns;
  }
  get devices(): readonly DeviceRecord[] {
    return this.tables.devices;
  }
  get nodes(): readonly NodeRecord[] {
    return this.tables.nodes;
  }
  get edges(): readonly EdgeRecord[] {
    return this.tables.edges;
  }
  get runs(): readonly RunRecord[] {
    return this.tables.runs;
  }
  /** Events of past runs the kernel did not stream live (a fast loop; all are in its trace). */
  get skippedEvents(): number {
    return this.skipped;
  }
  /** The oldest events dropped to keep the store under its limit (`events.maxEvents`). */
  get droppedEvents(): number {
    return this.events.dropped;
  }
  /** The runs' active spans and the collapsed time axis, current with the events. */
  activity(): RunActivity {
    this.runActivity.update(this.events);
    return this.runActivity;
  }
  /** The snapshot of the run in flight; null when no run is in flight. */
  get progress(): RunProgress | null {
    return this.liveRun;
  }

  /** Index of the node with this id in `nodes`, -1 when there is none. */
  nodeIndex(id: number): number {
    return this.nodeIndexById.get(id) ?? -1;
  }

  nodeIndexByName(name: string): number {
    return this.nodeIndexByNameMap.get(name) ?? -1;
  }

  nodeById(id: number): NodeRecord | undefined {
    const index = this.nodeIndex(id);
    return index < 0 ? undefined : this.tables.nodes[index];
  }

  deviceById(id: number | null): DeviceRecord | undefined {
    const index = id === null ? undefined : this.deviceIndexById.get(id);
    return index === undefined ? undefined : this.tables.devices[index];
  }

  /**
   * The document this store shows, as the kernel writes one (Trace.to_document): what a notebook
   * keeps of a live view whose kernel stopped (hosts/rescue.ts). Events dropped or skipped are not
   * in it; the events' codes are this version's, so the kinds tables name them. Above `maxEvents`
   * events it holds the latest run's only (the events after the last one of an earlier run), as
   * the kernel's saved output does (placeviz/inspector/cell_output.py, `shown_trace`).
   */
  toDocument(maxEvents: number = Infinity): PlacementDocument {
    const { count, run } = this.events;
    let first = 0;
    if (count > maxEvents) {
      let last = count - 1;
      while (last >= 0 && run[last] < 0) {
        last--;
      }
      first = last + 1;
      while (first > 0 && (run[first - 1] === run[last] || run[first - 1] < 0)) {
        first--;
      }
    }
    const events = Object.fromEntries(
      COLUMN_NAMES.map((name) => [name, Array.from(this.events[name].subarray(first, count))]),
    ) as EventLists;
    return {
      schema: this.schema,
      origin_ns: this.tables.origin_ns,
      devices: [...this.tables.devices],
      nodes: [...this.tables.nodes],
      edges: [...this.tables.edges],
      runs: [...this.tables.runs],
      ...(this.whatIf === null ? {} : { prediction: this.whatIf }),
      event_kinds: codeTable(EVENT_KIND_LABELS),
      timing_sources: codeTable(TIMING_SOURCE_LABELS),
      events,
    };
  }

  /** Replace the static tables (a live `tables` message); the events stay. */
  applyTables(tables: Tables): void {
    const nodes = this.tables.nodes;
    this.tables = normalizeTables(tables);
    this.index();
    if (!sameIds(nodes, this.tables.nodes)) {
      this.timeline = null; // events resolve to other node indices: fold them all in again
    }
    this.changed('tables');
  }

  /**
   * Append events. When they hold the RUN event of the run in flight, that run has ended: its
   * snapshot is dropped (listeners hear 'events', then 'progress').
   */
  appendBatch(batch: EventBatch): void {
    const before = this.events.count;
    this.events.appendBatch(batch);
    this.afterAppend(before);
  }

  appendLists(events: Partial<EventLists>): void {
    const before = this.events.count;
    this.events.appendLists(events);
    this.afterAppend(before);
  }

  /** Count events a live update skipped (see `skippedEvents`). */
  addSkipped(count: number): void {
    this.skipped += count;
  }

  /** Forget the events and the run in flight (a new cell run into the same widget). */
  reset(): void {
    this.events.clear();
    this.skipped = 0;
    const hadProgress = this.liveRun !== null;
    this.liveRun = null;
    this.changed('events');
    if (hadProgress) {
      this.changed('progress');
    }
  }

  /**
   * Show `progress` as the run in flight, replacing any previous snapshot; null: no run in flight.
   * The lists are copied. Listeners hear 'progress' (when there was or is a snapshot).
   */
  setProgress(progress: RunProgress | null): void {
    if (progress === null && this.liveRun === null) {
      return;
    }
    this.liveRun =
      progress === null
        ? null
        : Object.freeze({
            run: progress.run,
            waiting: Object.freeze([...progress.waiting]),
            running: Object.freeze([...progress.running]),
            done: Object.freeze([...progress.done]),
          });
    this.changed('progress');
  }

  /**
   * Call `cb` after each mutation; returns the function that stops it. The inspector is the one
   * listener: it hands the views what changed once per frame (view.ts).
   */
  onChange(cb: (change: StoreChange) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Per node index, its latest OP event and whether it failed (see opstate.ts). */
  opSpans(): OpSpans {
    return this.derived().spans;
  }

  /** The latest event end, ns since origin (0 without events). */
  endTime(): number {
    return this.derived().endTime;
  }

  /**
   * Fill `out[nodeIndex]` with OP_STATES codes at time `t`. null: the live view, the end of
   * everything with the run in flight laid over it (its waiting, running and done ops); a past
   * time ignores the run in flight.
   */
  stateAt(t: number | null, out: Uint8Array): void {
    this.derived().stateAt(t, out);
    const live = this.liveRun;
    if (t === null && live !== null) {
      const mark = (ids: readonly number[], state: number) => {
        for (const id of ids) {
          const index = this.nodeIndex(id);
          if (index >= 0 && index < out.length) {
            out[index] = state;
          }
        }
      };
      mark(live.waiting, WAITING);
      mark(live.done, DONE);
      mark(live.running, RUNNING);
    }
  }

  /** The op timeline, with the events added since it was last read folded in. */
  private derived(): OpTimeline {
    this.timeline ??= new OpTimeline(this.tables.nodes.length);
    this.timeline.update({
      events: this.events,
      runs: this.tables.runs,
      originNs: this.tables.origin_ns,
      nodeIndex: (id) => this.nodeIndex(id),
      nodeIndexByName: (name) => this.nodeIndexByName(name),
    });
    return this.timeline;
  }

  private index(): void {
    this.nodeIndexById = new Map(this.tables.nodes.map((n, i) => [n.id, i]));
    this.nodeIndexByNameMap = new Map(this.tables.nodes.map((n, i) => [n.name, i]));
    this.deviceIndexById = new Map(this.tables.devices.map((d, i) => [d.id, i]));
  }

  private afterAppend(before: number): void {
    const live = this.liveRun;
    let ended = false;
    if (live !== null) {
      const { kind, run, count } = this.events;
      for (let e = before; e < count && !ended; e++) {
        ended = kind[e] === EventKind.RUN && run[e] === live.run;
      }
    }
    if (ended) {
      this.liveRun = null;
    }
    this.changed('events');
    if (ended) {
      this.changed('progress');
    }
  }

  private changed(change: StoreChange): void {
    for (const listener of [...this.listeners]) {
      listener(change);
    }
  }
}

/** A kinds table as a document ships it (code as a string -> name). */
function codeTable(labels: Readonly<Record<number, string>>): CodeTable {
  return Object.fromEntries(Object.entries(labels));
}

/** Whether two node tables list the same ids in the same order. */
function sameIds(a: readonly NodeRecord[], b: readonly NodeRecord[]): boolean {
  return a.length === b.length && a.every((node, i) => node.id === b[i].id);
}
