/**
 * Reading a placement document of any schema version into the current records: a saved notebook
 * may carry an older document, so every optional field gets a default instead of an error. Only a
 * document without device and node arrays cannot be drawn at all.
 */
import {
  COLUMN_NAMES,
  DEVICE_KINDS,
  EventKind,
  REASON_KINDS,
  RUNS_LISTED,
  TimingSource,
} from './types';
import type {
  DeviceKind,
  DeviceRecord,
  EdgeRecord,
  EventLists,
  NodeRecord,
  Reason,
  ReasonKind,
  RunRecord,
  Tables,
} from './types';

export type Loose = Record<string, unknown>;

export interface NormalizedDocument {
  schema: string;
  tables: Tables;
  events: Partial<EventLists>;
  /** A what-if's question when the document is a prediction (its times are modeled); else null. */
  prediction: string | null;
}

export function normalizeDocument(doc: unknown): NormalizedDocument {
  if (!isObject(doc)) {
    throw new Error('placement document: expected a JSON object');
  }
  const events = isObject(doc.events) ? numberColumns(doc.events) : {};
  remapCodes(events.kind, doc.event_kinds, EventKind);
  remapCodes(events.source, doc.timing_sources, TimingSource);
  return {
    schema: typeof doc.schema === 'string' ? doc.schema : 'placeviz/0',
    tables: normalizeTables(doc),
    events,
    prediction: normalizePrediction(doc.prediction),
  };
}

/** The document's what-if question: a non-empty string, else null (a measured trace). */
export function normalizePrediction(raw: unknown): string | null {
  return typeof raw === 'string' && raw.trim() !== '' ? raw : null;
}

/** The static tables of a document or of a live `tables` message. */
export function normalizeTables(raw: unknown): Tables {
  if (!isObject(raw)) {
    throw new Error('placement tables: expected a JSON object');
  }
  if (!Array.isArray(raw.devices)) {
    throw new Error('placement document: "devices" must be an array');
  }
  if (!Array.isArray(raw.nodes)) {
    throw new Error('placement document: "nodes" must be an array');
  }
  const devices = raw.devices.filter(isObject).map(normalizeDevice);
  const nodes = raw.nodes.filter(isObject).map(normalizeNode);
  // Only documents from before `crosses` existed need each node's device to fill it in.
  let deviceOf: Map<number, number | null> | null = null;
  const devicesOf = () => (deviceOf ??= new Map(nodes.map((n) => [n.id, n.device])));
  return {
    origin_ns: numberOr(raw.origin_ns, 0),
    devices,
    nodes,
    edges: (Array.isArray(raw.edges) ? raw.edges : [])
      .filter(isObject)
      .map((e) => normalizeEdge(e, devicesOf)),
    runs: (Array.isArray(raw.runs) ? raw.runs : [])
      .filter(isObject)
      .map(normalizeRun)
      .slice(-RUNS_LISTED),
  };
}

function normalizeDevice(raw: Loose, position: number): DeviceRecord {
  const name = stringOr(raw.name, `device ${position}`);
  const parsed = /device:([A-Za-z_][A-Za-z0-9_]*):(\d+)$/.exec(name);
  const kind = (DEVICE_KINDS as readonly string[]).includes(raw.kind as string)
    ? (raw.kind as DeviceKind)
    : 'real';
  return {
    id: numberOr(raw.id, position),
    name,
    type: stringOr(raw.type, parsed ? parsed[1].toUpperCase() : ''),
    index: numberOr(raw.index, parsed ? Number(parsed[2]) : 0),
    parent: stringOr(raw.parent, name),
    kind,
    profile: typeof raw.profile === 'string' ? raw.profile : null,
    description: stringOr(raw.description, ''),
    memory_limit: numberOr(raw.memory_limit, 0),
    reserved: numberOr(raw.reserved, 0),
    // Documents from before clusters name no process.
    ...(typeof raw.pid === 'number' ? { pid: raw.pid } : {}),
    address: typeof raw.address === 'string' ? raw.address : null,
  };
}

function normalizeNode(raw: Loose, position: number): NodeRecord {
  const name = stringOr(raw.name, `op ${position}`);
  const slash = name.lastIndexOf('/');
  return {
    id: numberOr(raw.id, position),
    name,
    type: stringOr(raw.type, ''),
    scope: stringOr(raw.scope, slash < 0 ? '' : name.slice(0, slash)),
    requested: stringOr(raw.requested, ''),
    device: typeof raw.device === 'number' ? raw.device : null,
    reason: normalizeReason(raw.reason),
    shapes: Array.isArray(raw.shapes) ? (raw.shapes as NodeRecord['shapes']) : [],
    dtype: typeof raw.dtype === 'string' ? raw.dtype : null,
    bytes_out: typeof raw.bytes_out === 'number' ? raw.bytes_out : null,
    source: stringOr(raw.source, ''),
  };
}

function normalizeReason(raw: unknown): Reason | null {
  if (typeof raw === 'string') {
    return { kind: 'default', text: raw, anchor: null };
  }
  if (!isObject(raw)) {
    return null;
  }
  const kind = (REASON_KINDS as readonly string[]).includes(raw.kind as string)
    ? (raw.kind as ReasonKind)
    : 'default';
  return {
    kind,
    text: stringOr(raw.text, ''),
    anchor: typeof raw.anchor === 'string' ? raw.anchor : null,
  };
}

function normalizeEdge(raw: Loose, devicesOf: () => Map<number, number | null>): EdgeRecord {
  const src = numberOr(raw.src, -1);
  const dst = numberOr(raw.dst, -1);
  const crosses = () => {
    const a = devicesOf().get(src) ?? null;
    const b = devicesOf().get(dst) ?? null;
    return a !== null && b !== null && a !== b;
  };
  return {
    src,
    dst,
    kind: raw.kind === 'control' ? 'control' : 'data',
    bytes: typeof raw.bytes === 'number' ? raw.bytes : null,
    crosses: typeof raw.crosses === 'boolean' ? raw.crosses : crosses(),
  };
}

function normalizeRun(raw: Loose, position: number): RunRecord {
  return {
    id: numberOr(raw.id, position),
    t0: numberOr(raw.t0, 0),
    t1: numberOr(raw.t1, 0),
    status: raw.status === 'error' ? 'error' : 'ok',
    error: typeof raw.error === 'string' ? raw.error : null,
    fetches: Array.isArray(raw.fetches) ? raw.fetches.filter((f) => typeof f === 'string') : [],
    dry: raw.dry === true,
    unread: Array.isArray(raw.unread) ? raw.unread.filter((n) => Number.isInteger(n)) : [],
    folded: Array.isArray(raw.folded) ? raw.folded.filter((n) => Number.isInteger(n)) : [],
  };
}

function numberColumns(raw: Loose): Partial<EventLists> {
  const columns: Partial<EventLists> = {};
  for (const name of COLUMN_NAMES) {
    const values = raw[name];
    if (Array.isArray(values)) {
      columns[name] = values as number[];
    }
  }
  return columns;
}

/**
 * The views read kinds by the codes of contract.gen.ts; a document names its own codes in its
 * kinds tables (code -> name). Where those differ (another version's document), its column is
 * rewritten to this version's codes once, on load; a code whose name this version does not know
 * becomes -1, which no view draws.
 */
function remapCodes(
  column: number[] | undefined,
  table: unknown,
  codes: Readonly<Record<string, number>>,
): void {
  if (column === undefined || !isObject(table)) {
    return;
  }
  const byName = new Map(Object.entries(codes).map(([name, code]) => [name.toLowerCase(), code]));
  const map = new Map<number, number>();
  let same = true;
  for (const [code, name] of Object.entries(table)) {
    const mine =
      typeof name === 'string' ? (byName.get(name.replace('-', '_').toLowerCase()) ?? -1) : -1;
    map.set(Number(code), mine);
    same &&= mine === Number(code);
  }
  if (same) {
    return;
  }
  for (let i = 0; i < column.length; i++) {
    column[i] = map.get(column[i]) ?? column[i];
  }
}

export function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

export function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
