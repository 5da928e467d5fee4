// Generated from placeviz/contract.py by `python3 scripts/generate_contract.py`: do not
// edit. The kernel-browser contract: the document's records, event columns and kinds.

export const SCHEMA = 'placeviz/1';

/** Views keep the records of the newest this many runs (the kernel sends no more). */
export const RUNS_LISTED = 1000;
/** Moved ops a comparison's summary lists; the rest are counted. */
export const MOVED_LISTED = 20;
/** Above this many events a notebook's saved document keeps the latest run's only. */
export const SHOWN_EVENTS = 250000;

export const EventKind = { RUN: 0, PLACEMENT: 1, OP: 2, TRANSFER: 3, ALLOC: 4, FREE: 5, CARD_MEMORY: 6, NOT_RUN: 7, FRAME: 8, WAIT: 9 } as const;
export const EVENT_KIND_LABELS: Readonly<Record<number, string>> = { 0: 'run', 1: 'placement', 2: 'op', 3: 'transfer', 4: 'alloc', 5: 'free', 6: 'card_memory', 7: 'not_run', 8: 'frame', 9: 'wait' };

export const TimingSource = { NONE: 0, CLOCK: 1, CUDA_EVENT: 2, MODELED: 3 } as const;
export const TIMING_SOURCE_LABELS: Readonly<Record<number, string>> = { 0: 'none', 1: 'clock', 2: 'cuda-event', 3: 'modeled' };

export const REASON_KINDS = ['pinned', 'default', 'soft', 'colocated', 'sticky', 'generator', 'metadata', 'identity', 'reference', 'cost', 'moved', 'unplaced'] as const;
export type ReasonKind = (typeof REASON_KINDS)[number];

export const DEVICE_KINDS = ['real', 'logical', 'simulated'] as const;
export type DeviceKind = (typeof DEVICE_KINDS)[number];

export const EDGE_KINDS = ['data', 'control'] as const;
export type EdgeKind = (typeof EDGE_KINDS)[number];

export const RUN_STATUSES = ['ok', 'error'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const COLUMN_NAMES = ['kind', 't0', 't1', 'node', 'device', 'stream', 'bytes', 'source', 'run', 'peer', 'frame', 'iteration'] as const;
export type ColumnName = (typeof COLUMN_NAMES)[number];

/** Event columns as the document's JSON has them (times in ns since origin_ns). */
export type EventLists = Record<ColumnName, number[]>;

/** What a column without a value holds (an older document's, an op outside loops). */
export const COLUMN_GENERATED_DEFAULTS: Partial<Record<ColumnName, number>> = {
  frame: -1,
  iteration: -1,
};

/** A kinds table as the document ships it: code (as a string) -> name. */
export type CodeTable = Record<string, string>;

/** Each column's typed array: how it travels in a live update and how views hold it. */
export const COLUMN_ARRAYS = {
  kind: Int8Array,
  t0: Float64Array,
  t1: Float64Array,
  node: Int32Array,
  device: Int16Array,
  stream: Int16Array,
  bytes: Float64Array,
  source: Int8Array,
  run: Int32Array,
  peer: Int16Array,
  frame: Int32Array,
  iteration: Int32Array,
} as const;

/** One binary batch of a live update: a typed array per column, all of length count. */
export interface EventBatch {
  count: number;
  kind: Int8Array; // an EventKind code
  t0: Float64Array; // start, ns (in a document: since origin_ns)
  t1: Float64Array; // end, ns; t0 for an instant
  node: Int32Array; // the op's node id, -1 for none
  device: Int16Array; // the device id (a transfer's destination), -1 for none
  stream: Int16Array; // the stream on the device
  bytes: Float64Array; // bytes written, moved, allocated or freed
  source: Int8Array; // a TimingSource code
  run: Int32Array; // the run's id, -1 for none
  peer: Int16Array; // a transfer's source device, -1 for none
  frame: Int32Array; // an op execution's while loop: its LoopCond's node id, -1 outside loops
  iteration: Int32Array; // an op execution's iteration of that loop, from 0; -1 outside loops
}

export const COMPARE_SCHEMA = 'placeviz-compare/1';

/** A device ops can be placed on. */
export interface DeviceRecord {
  id: number;
  name: string; // /job:localhost/.../device:GPU:0
  type: string; // CPU | GPU
  index: number;
  parent: string; // the physical device: /physical_device:GPU:0
  kind: DeviceKind;
  profile?: string | null;
  description?: string;
  memory_limit: number;
  reserved?: number; // bytes the runtime holds
  pid?: number; // the process that runs its ops
  address?: string | null; // its cluster task's address, host:port; null in the session's own process
}

/** Why an op is where it is. */
export interface Reason {
  kind: ReasonKind;
  text: string; // one sentence a student understands
  anchor?: string | null; // the op that decided
}

/** An op of the graph, where it was placed and why. */
export interface NodeRecord {
  id: number;
  name: string;
  type: string;
  scope: string;
  requested: string; // the device the op asked for, '' for none
  device: number | null; // a device id, null when not placed
  reason: Reason | null;
  shapes: ((number | null)[] | null)[]; // per output
  dtype: string | null;
  bytes_out: number | null;
  source: string; // where the op was made: 'Cell In[3], line 6'
}

/** A data or control edge between two nodes. */
export interface EdgeRecord {
  src: number;
  dst: number;
  kind: EdgeKind;
  bytes: number | null;
  crosses: boolean; // its ends are on different devices
}

/** One Session.run. */
export interface RunRecord {
  id: number;
  t0: number; // absolute ns (subtract origin_ns)
  t1: number;
  status: RunStatus;
  error?: string | null;
  fetches?: string[];
  dry?: boolean; // shapes only: no kernel ran (absent: false)
  unread?: number[]; // nodes run as NoOps: nothing in the run read their outputs (TF's grappler)
  folded?: number[]; // nodes folded into constants: computed once from constants (TF's grappler)
}

/** The placement document: what the kernel hands the browser. */
export interface PlacementDocument {
  schema: string; // older versions still render
  origin_ns: number;
  devices: DeviceRecord[];
  nodes: NodeRecord[];
  edges: EdgeRecord[];
  runs: RunRecord[];
  event_kinds?: CodeTable; // kind code -> name
  timing_sources?: CodeTable; // source code -> name
  prediction?: string | null; // a what-if's question: its times are modeled, not measured
  events: EventLists; // one list per column, times in ns since origin_ns
}

/** An op the two placements put on different devices. */
export interface MovedOp {
  name: string;
  from: string; // the first placement's device, full name
  to: string; // the second placement's device, full name
}

/** One device under both placements. */
export interface DeviceDelta {
  device: string; // full name; absent from a side: zeros there
  ops: number[]; // [first, second]
  busy_ns: number[]; // [first, second], in the last run
  peak_bytes: (number | null)[]; // [first, second]; null: that side recorded no memory (a what-if models none)
}

/** Two placements of one graph side by side: what moved, and what it changed. */
export interface ComparisonDocument {
  schema: string;
  labels: string[]; // [first, second]: 'simple', 'cost'
  documents: PlacementDocument[]; // [first, second]
  step_ns: number[]; // [first, second]: the last run's span
  moved: MovedOp[];
  devices: DeviceDelta[];
}
