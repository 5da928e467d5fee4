/**
 * What each op did, derived from the event columns: its latest run (for colouring and the details
 * pane) and its state at a scrubber time.
 *
 * Which ops failed: a run that ended in an error names the op that raised in its message, quoted
 * (`[[node 'tower_0/matmul' (MatMul) ...]]`). An op is failed when a failed run's error quotes its
 * name and the op has not run since that run; the other ops of a failed run keep their own states.
 */
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
  /** Indices into the time-sorted OP arrays of this run's OP events. */
  ops: Int32Array;
  /** Node indices a failed run's error names; empty for a run that went well. */
  named: Int32Array;
}

/** The events and tables the derivations read. */
export interface OpSource {
  events: EventBatch;
  runs: readonly RunRecord[];
  originNs: number;
  nodeCount: number;
  nodeIndex(id: number): number;
  nodeIndexByName(name: string): number;
}

/** OP events sorted by start, with node indices resolved, plus each run's span. */
export class OpTimeline {
  readonly spans: OpSpans;
  readonly endTime: number;
  private readonly order: { node: Int32Array; t0: Float64Array; t1: Float64Array; run: Int32Array };
  private readonly runSpans: RunSpan[];
  private readonly lastStart: Float64Array;
  private readonly lastRun: Int32Array;

  constructor(source: OpSource) {
    const { events, nodeCount } = source;
    const opEvents: number[] = [];
    let endTime = 0;
    for (let e = 0; e < events.count; e++) {
      endTime = Math.max(endTime, events.t1[e], events.t0[e]);
      if (events.kind[e] === EventKind.OP && source.nodeIndex(events.node[e]) >= 0) {
        opEvents.push(e);
      }
    }
    this.endTime = endTime;
    // Live batches mostly arrive in time order: sort only when they did not.
    if (!startsInOrder(events.t0, opEvents)) {
      opEvents.sort((a, b) => events.t0[a] - events.t0[b] || a - b);
    }
    const n = opEvents.length;
    this.order = {
      node: new Int32Array(n),
      t0: new Float64Array(n),
      t1: new Float64Array(n),
      run: new Int32Array(n),
    };
    opEvents.forEach((e, i) => {
      this.order.node[i] = source.nodeIndex(events.node[e]);
      this.order.t0[i] = events.t0[e];
      this.order.t1[i] = events.t1[e];
      this.order.run[i] = events.run[e];
    });
    this.runSpans = buildRunSpans(source, this.order.run);
    this.spans = latestSpans(source, opEvents, nodeCount);
    for (const run of this.runSpans) {
      for (const node of run.named) {
        if (!(this.spans.t0[node] >= run.end)) {
          this.spans.failed[node] = 1;
        }
      }
    }
    this.lastStart = new Float64Array(nodeCount);
    this.lastRun = new Int32Array(nodeCount);
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
    for (let i = 0; i < node.length && t0[i] <= t; i++) {
      const n = node[i];
      out[n] = t < t1[i] ? RUNNING : DONE;
      this.lastStart[n] = t0[i];
      this.lastRun[n] = run[i];
    }
    let current: RunSpan | null = null;
    for (const span of this.runSpans) {
      if (span.start > t) {
        continue;
      }
      if (t < span.end && (current === null || span.start >= current.start)) {
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
      for (const i of current.ops) {
        if (t0[i] > t) {
          out[node[i]] = WAITING;
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

function latestSpans(source: OpSource, sortedEvents: number[], nodeCount: number): OpSpans {
  const { events } = source;
  const spans: OpSpans = {
    t0: new Float64Array(nodeCount).fill(NaN),
    t1: new Float64Array(nodeCount).fill(NaN),
    device: new Int16Array(nodeCount).fill(-1),
    stream: new Int16Array(nodeCount).fill(-1),
    run: new Int32Array(nodeCount).fill(-1),
    failed: new Uint8Array(nodeCount),
  };
  // Sorted by start, so the last write per node is its latest event.
  for (const e of sortedEvents) {
    const n = source.nodeIndex(events.node[e]);
    spans.t0[n] = events.t0[e];
    spans.t1[n] = events.t1[e];
    spans.device[n] = events.device[e];
    spans.stream[n] = events.stream[e];
    spans.run[n] = events.run[e];
  }
  return spans;
}

/** Each run's span (from its events, else its record) and OP events, and what its error names. */
function buildRunSpans(source: OpSource, run: Int32Array): RunSpan[] {
  const { events } = source;
  const spans = new Map<number, { start: number; end: number; ops: number[] }>();
  const spanOf = (id: number) => {
    let span = spans.get(id);
    if (span === undefined) {
      span = { start: Infinity, end: -Infinity, ops: [] };
      spans.set(id, span);
    }
    return span;
  };
  for (let e = 0; e < events.count; e++) {
    if (events.kind[e] === EventKind.RUN || events.kind[e] === EventKind.OP) {
      const span = spanOf(events.run[e]);
      span.start = Math.min(span.start, events.t0[e]);
      span.end = Math.max(span.end, events.t1[e]);
    }
  }
  for (let i = 0; i < run.length; i++) {
    spanOf(run[i]).ops.push(i);
  }
  const errors = new Map<number, string>();
  for (const record of source.runs) {
    const span = spanOf(record.id);
    if (span.start === Infinity) {
      span.start = record.t0 - source.originNs;
      span.end = record.t1 - source.originNs;
    }
    if (record.status === 'error') {
      errors.set(record.id, record.error ?? '');
    }
  }
  return [...spans].map(([id, span]) => ({
    id,
    start: span.start,
    end: span.end,
    ops: Int32Array.from(span.ops),
    named: namedNodes(source, errors.get(id)),
  }));
}

/** Node indices whose names an error message quotes. */
function namedNodes(source: OpSource, error: string | undefined): Int32Array {
  if (!error) {
    return new Int32Array(0);
  }
  const found = new Set<number>();
  for (const match of error.matchAll(/'([^'\n]+)'|"([^"\n]+)"/g)) {
    const index = source.nodeIndexByName(match[1] ?? match[2]);
    if (index >= 0) {
      found.add(index);
    }
  }
  return Int32Array.from(found);
}
