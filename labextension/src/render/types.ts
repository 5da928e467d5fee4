/**
 * The placement document (schema placeviz/1) as the kernel writes it: its records, columns and
 * kinds are generated from placeviz/contract.py (contract.gen.ts); this file adds the renderer's own.
 */

export {
  COLUMN_ARRAYS,
  COLUMN_GENERATED_DEFAULTS,
  COLUMN_NAMES,
  EventKind,
  EVENT_KIND_LABELS,
  REASON_KINDS,
  DEVICE_KINDS,
  TimingSource,
  TIMING_SOURCE_LABELS,
  RUNS_LISTED,
  MOVED_LISTED,
  SHOWN_EVENTS,
} from './contract.gen';
export type {
  CodeTable,
  ColumnName,
  DeviceKind,
  DeviceRecord,
  EdgeKind,
  EdgeRecord,
  EventBatch,
  EventLists,
  NodeRecord,
  PlacementDocument,
  Reason,
  ReasonKind,
  RunRecord,
  RunStatus,
} from './contract.gen';
import type { PlacementDocument } from './contract.gen';

/** The static tables a live `tables` message replaces. */
export type Tables = Pick<PlacementDocument, 'origin_ns' | 'devices' | 'nodes' | 'edges' | 'runs'>;

/** What an op is doing at a moment of the scrubber. */
export type OpState = 'idle' | 'waiting' | 'running' | 'done' | 'failed';
export type ColourMode = 'device' | 'state' | 'time' | 'memory';
