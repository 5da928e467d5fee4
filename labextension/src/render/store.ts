/**
 * The placement document a view shows, kept current by live messages. Views read it and listen
 * for changes; what they derive from the events (op spans, states) is cached until the next change.
 */
import { EventColumns } from './events';
import { normalizeDocument, normalizeTables } from './normalize';
import { OpTimeline, type OpSpans } from './opstate';
import type {
  DeviceRecord,
  EdgeRecord,
  EventBatch,
  EventLists,
  NodeRecord,
  RunRecord,
  Tables,
} from './types';

export { OP_STATES, type OpSpans } from './opstate';

/** What changed: the graph tables (views lay out again) or only the events (views recolour). */
export type StoreChange = 'tables' | 'events';

export class PlacementStore {
  readonly schema: string;
  readonly events = new EventColumns();
  private tables: Tables;
  private nodeIndexById = new Map<number, number>();
  private nodeIndexByNameMap = new Map<string, number>();
  private deviceIndexById = new Map<number, number>();
  private listeners = new Set<(change: StoreChange) => void>();
  private timeline: OpTimeline | null = null;

  private constructor(schema: string, tables: Tables) {
    this.schema = schema;
    this.tables = tables;
    this.index();
  }

  /** A store for a document of any schema version; throws when devices or nodes are missing. */
  static fromDocument(doc: unknown): PlacementStore {
    const normalized = normalizeDocument(doc);
    const store = new PlacementStore(normalized.schema, normalized.tables);
    store.events.appendLists(normalized.events);
    return store;
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

  /** Replace the static tables (a live `tables` message); the events stay. */
  applyTables(tables: Tables): void {
    this.tables = normalizeTables(tables);
    this.index();
    this.changed('tables');
  }

  appendBatch(batch: EventBatch): void {
    this.events.appendBatch(batch);
    this.changed('events');
  }

  appendLists(events: Partial<EventLists>): void {
    this.events.appendLists(events);
    this.changed('events');
  }

  /** Forget the events (a new cell run into the same widget). */
  reset(): void {
    this.events.clear();
    this.changed('events');
  }

  /** Call `cb` after each mutation; returns the function that stops it. */
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

  /** Fill `out[nodeIndex]` with OP_STATES codes at time `t` (null: the end of everything). */
  stateAt(t: number | null, out: Uint8Array): void {
    this.derived().stateAt(t, out);
  }

  private derived(): OpTimeline {
    if (this.timeline === null) {
      this.timeline = new OpTimeline({
        events: this.events,
        runs: this.tables.runs,
        originNs: this.tables.origin_ns,
        nodeCount: this.tables.nodes.length,
        nodeIndex: (id) => this.nodeIndex(id),
        nodeIndexByName: (name) => this.nodeIndexByName(name),
      });
    }
    return this.timeline;
  }

  private index(): void {
    this.nodeIndexById = new Map(this.tables.nodes.map((n, i) => [n.id, i]));
    this.nodeIndexByNameMap = new Map(this.tables.nodes.map((n, i) => [n.name, i]));
    this.deviceIndexById = new Map(this.tables.devices.map((d, i) => [d.id, i]));
  }

  private changed(change: StoreChange): void {
    this.timeline = null;
    for (const listener of [...this.listeners]) {
      listener(change);
    }
  }
}
