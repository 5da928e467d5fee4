/**
 * The placement document (schema placeviz/1) as the kernel writes it, and the event columns the
 * renderer keeps. Field names follow the JSON: the document is the contract, not this file.
 */

export type DeviceKind = 'real' | 'logical' | 'simulated';

export interface DeviceRecord {
  id: number;
  name: string; // /job:localhost/replica:0/task:0/device:GPU:0
  type: string; // CPU | GPU
  index: number;
  parent: string; // the physical device: /physical_device:GPU:0
  kind: DeviceKind;
  profile?: string | null;
  description?: string;
  memory_limit: number;
  reserved?: number;
}

export type ReasonKind =
  | 'pinned'
  | 'default'
  | 'soft'
  | 'colocated'
  | 'sticky'
  | 'generator'
  | 'metadata'
  | 'identity'
  | 'reference'
  | 'unplaced'; // not a decision: the group could not be placed, and the text is the error

export interface Reason {
  kind: ReasonKind;
  text: string;
  anchor?: string | null;
}

export interface NodeRecord {
  id: number;
  name: string;
  type: string;
  scope: string;
  requested: string;
  device: number | null;
  reason: Reason | null;
  shapes: (number | null)[][] | null[];
  dtype: string | null;
  bytes_out: number | null;
  source: string;
}

export interface EdgeRecord {
  src: number;
  dst: number;
  kind: 'data' | 'control';
  bytes: number | null;
  crosses: boolean;
}

export interface RunRecord {
  id: number;
  t0: number; // absolute ns (subtract origin_ns)
  t1: number;
  status: 'ok' | 'error';
  error?: string | null;
  fetches?: string[];
}

export const COLUMN_NAMES = [
  'kind',
  't0',
  't1',
  'node',
  'device',
  'stream',
  'bytes',
  'source',
  'run',
  'peer',
] as const;
export type ColumnName = (typeof COLUMN_NAMES)[number];

/** Event columns as the document's JSON has them (times in ns since origin_ns). */
export type EventLists = Record<ColumnName, number[]>;

export interface PlacementDocument {
  schema: string; // "placeviz/1"; older versions must still render
  origin_ns: number;
  devices: DeviceRecord[];
  nodes: NodeRecord[];
  edges: EdgeRecord[];
  runs: RunRecord[];
  event_kinds?: Record<string, string>;
  timing_sources?: Record<string, string>;
  events: EventLists;
}

/** The static tables a live `tables` message replaces. */
export type Tables = Pick<PlacementDocument, 'origin_ns' | 'devices' | 'nodes' | 'edges' | 'runs'>;

/** Event kinds and timing sources (placeviz/events/kinds.py). */
export const EventKind = { RUN: 0, PLACEMENT: 1, OP: 2, TRANSFER: 3, ALLOC: 4, FREE: 5 } as const;
export const TimingSource = { NONE: 0, CLOCK: 1, CUDA_EVENT: 2, MODELED: 3 } as const;

/** One binary batch (docs/inspector.md): a typed array per column, all of length `count`. */
export interface EventBatch {
  count: number;
  kind: Int8Array;
  t0: Float64Array;
  t1: Float64Array;
  node: Int32Array;
  device: Int16Array;
  stream: Int16Array;
  bytes: Float64Array;
  source: Int8Array;
  run: Int32Array;
  peer: Int16Array;
}

/** What an op is doing at a moment of the scrubber. */
export type OpState = 'idle' | 'waiting' | 'running' | 'done' | 'failed';
export type ColourMode = 'device' | 'state' | 'time' | 'memory';
