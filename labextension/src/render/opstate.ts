/**
 * What each op did, derived from the event columns: its latest run (for colouring and the details
 * pane) and its state at a scrubber time.
 *
 * Which ops failed: a run that ended in an error names the op that raised in its message, quoted
 * (`[[node 'tower_0/matmul' (MatMul) ...]]`). An op is failed when a failed run's error quotes its
 * name and the op has not run since that run; the other ops of a failed run keep their own states.
 */
import { EventCursor, type CursorEvents } from './cursor';
import { firstStartAfter, growColumn } from './events';
import { EventKind, type EventBatch, type RunRecord } from './types';

export const OP_STATES = ['idle', 'waiting', 'running', 'done', 'failed'] as const;
export const IDLE = 0;
export const WAITING = 1;
export const RUNNING = 2;
export const DONE = 3;
export const FAILED = 4;

/** Per node index: its latest OP event (NaN times when it never ran). */
export interface OpSpans {
  t0: Float64Array;
  t1: Float64Array;
  device: Int16Array;
  stream: Int16Array;
  run: Int32Array;
  failed: Uint8Array;
}

interface RunSpan {
  id: number;
  start: number;
  end: number;
  /** Whether start and end come from the run's RUN and OP events, else from its record. */
  fromEvents: boolean;
  /** Node indices a failed run's error names; empty for a run that went well. */
  named: Int32Array;
}

const NONE = new Int32Array(0);
/** The kinds that make the end time (endTime): not a card's memory reading nor an unknown kind. */
const TIMELINE_KINDS: ReadonlySet<number> = new Set([
  EventKind.RUN,
  EventKind.OP,
  EventKind.TRANSFER,
  EventKind.WAIT,
  EventKind.ALLOC,
  EventKind.FREE,
]);

/** The events and tables the derivations read. */
export interface OpSource {
  events: EventBatch & CursorEvents;
  runs: readonly RunRecord[];
  originNs: number;
  nodeIndex(id: number): number;
  nodeIndexByName(name: string): number;
}

/** OP events sorted by start (ties: in the order recorded), node indices resolved. */
class SortedOps {
  length = 0;
  node = new Int32Array(64);
  t0 = new Float64Array(64);
  t1 = new Float64Array(64);
  run = new Int32Array(64);

  /**
   * Add events (sorted by start, ties in recorded order, all recorded after those held): appended
   * when they start no earlier than the last held, else merged in one pass.
   */
  add(source: OpSource, sorted: readonly number[]): void {
    const { events } = source;
    const n = this.length;
    const m = sorted.length;
    if (m === 0) {
      return;
    }
    if (n === 0 || events.t0[sorted[0]] >= this.t0[n - 1]) {
      this.reserve(n + m);
      for (let k = 0; k < m; k++) {
        this.put(n + k, source, sorted[k]);
      }
      this.length = n + m;
      return;
    }
    // Out of order: merge into new columns, held events first on equal starts (recorded first).
    const old = { node: this.node, t0: this.t0, t1: this.t1, run: this.run };
    const size = Math.max(64, 2 * (n + m));
    this.node = new Int32Array(size);
    this.t0 = new Float64Array(size);
    this.t1 = new Float64Array(size);
    this.run = new Int32Array(size);
    let i = 0;
    let k = 0;
    for (let at = 0; at < n + m; at++) {
      if (k >= m || (i < n && old.t0[i] <= events.t0[sorted[k]])) {
        this.node[at] = old.node[i];
        this.t0[at] = old.t0[i];
        this.t1[at] = old.t1[i];
        this.run[at] = old.run[i];
        i += 1;
      } else {
        this.put(at, source, sorted[k]);
        k += 1;
      }
    }
    this.length = n + m;
  }

  /** Index of the first event starting after t. */
  after(t: number): number {
    return firstStartAfter(this.t0, this.length, t);
  }

  private put(at: number, source: OpSource, e: number): void {
    const { events } = source;
    this.node[at] = source.nodeIndex(events.node[e]);
    this.t0[at] = events.t0[e];
    this.t1[at] = events.t1[e];
    this.run[at] = events.run[e];
  }

  private reserve(needed: number): void {
    if (needed > this.t0.length) {
      const size = Math.max(needed, 2 * this.t0.length);
      this.node = growColumn(this.node, size);
      this.t0 = growColumn(this.t0, size);
      this.t1 = growColumn(this.t1, size);
      this.run = growColumn(this.run, size);
    }
  }
}

/**
 * The OP events sorted by start with node indices resolved, each op's latest span and each run's
 * span, folded in from a cursor: an update costs the events added since the last one (and the run
 * records, whose errors name the failed ops); events cleared or dropped make it start over.
 */
export class OpTimeline {
  readonly spans: OpSpans;
  private end = 0;
  private readonly cursor = new EventCursor();
  private order = new SortedOps();
  /** Per run id its span: of its RUN and OP events, else of its record. */
  private runSpans = new Map<number, RunSpan>();
  /** The run records the spans and the errors' named nodes were last taken from. */
  private records: readonly RunRecord[] | null = null;
  /** Node indices marked failed in `spans.failed`. */
  private marked: number[] = [];
  private readonly lastStart: Float64Array;
  private readonly lastRun: Int32Array;

  /** `nodeCount`: the nodes table's length; a new table of other ids needs a new timeline. */
  constructor(nodeCount: number) {
    this.spans = emptySpans(nodeCount);
    this.lastStart = new Float64Array(nodeCount);
    this.lastRun = new Int32Array(nodeCount);
  }

  /** The latest event end (or start) of TIMELINE_KINDS, ns since origin; 0 without events. */
  get endTime(): number {
    return this.end;
  }

  /** Fold in the events added since the last update and the current run records. */
  update(source: OpSource): void {
    const { events } = source;
    const { start, end, restart } = this.cursor.advance(events);
    if (restart) {
      this.end = 0;
      this.order = new SortedOps();
      this.runSpans = new Map();
      this.records = null;
      resetSpans(this.spans);
    }
    const fresh: number[] = [];
    for (let e = start; e < end; e++) {
      const kind = events.kind[e];
      if (!TIMELINE_KINDS.has(kind)) {
        continue; // a card's memory reading (memorymodel.ts), or a kind this version does not know
      }
      this.end = Math.max(this.end, events.t1[e], events.t0[e]);
      if (kind === EventKind.RUN || kind === EventKind.OP) {
        this.widenRun(events.run[e], events.t0[e], events.t1[e]);
      }
      if (kind === EventKind.OP && source.nodeIndex(events.node[e]) >= 0) {
        fresh.push(e);
      }
    }
    // Live batches mostly arrive in time order: sort only when they did not.
    if (!startsInOrder(events.t0, fresh)) {
      fresh.sort((a, b) => events.t0[a] - events.t0[b] || a - b);
    }
    this.order.add(source, fresh);
    this.foldLatest(source, fresh);
    const recordsChanged = source.runs !== this.records;
    if (recordsChanged) {
      this.takeRecords(source);
    }
    if (recordsChanged || end > start) {
      // An op that ran again after a failed run is no longer failed.
      this.markFailed();
    }
  }

  /** Fill `out` (one code of OP_STATES per node index) with the states at time `t`. */
  stateAt(t: number | null, out: Uint8Array): void {
    if (t === null) {
      this.finalStates(out);
      return;
    }
    out.fill(IDLE);
    this.lastStart.fill(NaN);
    this.lastRun.fill(-1);
    const { node, t0, t1, run } = this.order;
    const started = this.order.after(t);
    for (let i = 0; i < started; i++) {
      const n = node[i];
      out[n] = t < t1[i] ? RUNNING : DONE;
      this.lastStart[n] = t0[i];
      this.lastRun[n] = run[i];
    }
    let current: RunSpan | null = null;
    for (const span of this.runSpans.values()) {
      if (span.start > t) {
        continue;
      }
      const later =
        current === null ||
        span.start > current.start ||
        (span.start === current.start && span.id > current.id);
      if (t < span.end && later) {
        current = span;
      }
      for (const n of span.named) {
        const raisedHere = this.lastRun[n] === span.id && out[n] === DONE;
        const neverRanSince = t >= span.end && !(this.lastStart[n] >= span.start);
        if (raisedHere || neverRanSince) {
          out[n] = FAILED;
        }
      }
    }
    if (current !== null) {
      // The current run's ops that start later (before its end) are waiting.
      for (let i = started; i < this.order.length && t0[i] <= current.end; i++) {
        if (run[i] === current.id) {
          out[node[i]] = WAITING;
        }
      }
    }
  }

  /** Widen run `id`'s span to [t0, t1] (an event of it; the first replaces its record's). */
  private widenRun(id: number, t0: number, t1: number): void {
    const span = this.runSpans.get(id);
    if (span === undefined) {
      this.runSpans.set(id, { id, start: t0, end: t1, fromEvents: true, named: NONE });
    } else if (!span.fromEvents) {
      Object.assign(span, { start: t0, end: t1, fromEvents: true });
    } else {
      span.start = Math.min(span.start, t0);
      span.end = Math.max(span.end, t1);
    }
  }

  /**
   * The run records changed (a live run ended, or the oldest were dropped): the spans of runs
   * without events and the nodes failed runs' errors name are taken from them again.
   */
  private takeRecords(source: OpSource): void {
    for (const [id, span] of this.runSpans) {
      if (span.fromEvents) {
        span.named = NONE;
      } else {
        this.runSpans.delete(id);
      }
    }
    for (const record of source.runs) {
      let span = this.runSpans.get(record.id);
      if (span === undefined) {
        const [start, end] = [record.t0 - source.originNs, record.t1 - source.originNs];
        span = { id: record.id, start, end, fromEvents: false, named: NONE };
        this.runSpans.set(record.id, span);
      }
      if (record.status === 'error') {
        span.named = namedNodes(source, record.error ?? '');
      }
    }
    this.records = source.runs;
  }

  /** Each op's latest event: a later start wins, and on equal starts the later recorded one. */
  private foldLatest(source: OpSource, sorted: readonly number[]): void {
    const { events } = source;
    const spans = this.spans;
    for (const e of sorted) {
      const n = source.nodeIndex(events.node[e]);
      if (!(events.t0[e] < spans.t0[n])) {
        spans.t0[n] = events.t0[e];
        spans.t1[n] = events.t1[e];
        spans.device[n] = events.device[e];
        spans.stream[n] = events.stream[e];
        spans.run[n] = events.run[e];
      }
    }
  }

  /** An op is failed when a failed run's error names it and it has not run since that run. */
  private markFailed(): void {
    const { failed, t0 } = this.spans;
    for (const n of this.marked) {
      failed[n] = 0;
    }
    this.marked = [];
    for (const run of this.runSpans.values()) {
      for (const node of run.named) {
        if (!(t0[node] >= run.end) && failed[node] === 0) {
          failed[node] = 1;
          this.marked.push(node);
        }
      }
    }
  }

  private finalStates(out: Uint8Array): void {
    const { t0, failed } = this.spans;
    for (let n = 0; n < out.length; n++) {
      out[n] = failed[n] ? FAILED : Number.isNaN(t0[n]) ? IDLE : DONE;
    }
  }
}

function startsInOrder(t0: Float64Array, indices: number[]): boolean {
  for (let i = 1; i < indices.length; i++) {
    if (t0[indices[i]] < t0[indices[i - 1]]) {
      return false;
    }
  }
  return true;
}

function emptySpans(nodeCount: number): OpSpans {
  const spans: OpSpans = {
    t0: new Float64Array(nodeCount),
    t1: new Float64Array(nodeCount),
    device: new Int16Array(nodeCount),
    stream: new Int16Array(nodeCount),
    run: new Int32Array(nodeCount),
    failed: new Uint8Array(nodeCount),
  };
  resetSpans(spans);
  return spans;
}

function resetSpans(spans: OpSpans): void {
  spans.t0.fill(NaN);
  spans.t1.fill(NaN);
  spans.device.fill(-1);
  spans.stream.fill(-1);
  spans.run.fill(-1);
  spans.failed.fill(0);
}

/** Node indices whose names an error message quotes. */
function namedNodes(source: OpSource, error: string | undefined): Int32Array {
  if (!error) {
    return new Int32Array(0);
  }
  // TensorFlow's `[[node 'z' (ConcatV2) ...]]` names the op that raised; other quoted names in
  // the message (the largest live tensors of an OOM) are not failed. Without it, any quoted name.
  const raised = [...error.matchAll(/\[\[node '([^'\n]+)'/g)];
  const quoted = raised.length ? raised : error.matchAll(/'([^'\n]+)'|"([^"\n]+)"/g);
  const found = new Set<number>();
  for (const match of quoted) {
    const index = source.nodeIndexByName(match[1] ?? match[2]);
    if (index >= 0) {
      found.add(index);
    }
  }
  return Int32Array.from(found);
}
