/**
 * Reading a comparison document (schema placeviz-compare/1, contract.gen.ts ComparisonDocument:
 * two placements of one graph and the kernel's summary of what differs) into a store per
 * placement. Optional parts get defaults; what cannot be shown throws an Error that says why.
 */
import { COMPARE_SCHEMA, type DeviceDelta, type MovedOp } from './contract.gen';
import { PlacementStore } from './store';

/** A comparison document read: a store per placement and the kernel's summary of the two. */
export interface Comparison {
  schema: string;
  labels: [string, string];
  stores: [PlacementStore, PlacementStore];
  /** Each placement's step (its last run's span), ns; NaN when neither it nor a run says. */
  stepNs: [number, number];
  moved: MovedOp[];
  devices: DeviceDelta[];
}

type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** [first, second] numbers of a DeviceDelta field; a side the device is absent from is 0. */
function pair(value: unknown): number[] {
  const list = Array.isArray(value) ? value : [];
  return [finite(list[0]) ?? 0, finite(list[1]) ?? 0];
}

/**
 * A store's step, ns: its last run's span from its first op or transfer to its last (as the
 * kernel's step_ns), else that run's record; NaN without runs.
 */
function lastRunSpan(store: PlacementStore): number {
  const last = store.runs[store.runs.length - 1];
  if (last === undefined) {
    return NaN;
  }
  const active = store.activity().spans.get(last.id);
  return active !== undefined ? active[1] - active[0] : Math.max(0, last.t1 - last.t0);
}

/**
 * Read a comparison document (object or JSON text already parsed); throws an Error saying what
 * is wrong when it cannot be shown (not an object, another schema, not two placement documents,
 * a placement document that cannot be read). Optional parts get defaults.
 */
export function readComparison(data: unknown): Comparison {
  if (!isObject(data)) {
    throw new Error('comparison: expected a JSON object');
  }
  const schema = typeof data.schema === 'string' ? data.schema : COMPARE_SCHEMA;
  if (!schema.startsWith('placeviz-compare/')) {
    throw new Error(`comparison: schema "${schema}" is not ${COMPARE_SCHEMA}`);
  }
  const documents = Array.isArray(data.documents) ? data.documents : [];
  if (documents.length !== 2) {
    throw new Error('comparison: "documents" must hold two placement documents');
  }
  const rawLabels = Array.isArray(data.labels) ? data.labels : [];
  const labels = [0, 1].map((i) => {
    const label = rawLabels[i];
    return typeof label === 'string' && label !== '' ? label : i === 0 ? 'first' : 'second';
  }) as [string, string];
  const stores = documents.map((doc, i) => {
    try {
      return PlacementStore.fromDocument(doc);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`comparison: ${labels[i]}: ${reason}`);
    }
  }) as [PlacementStore, PlacementStore];
  const steps = Array.isArray(data.step_ns) ? data.step_ns : [];
  const stepNs = stores.map((store, i) => finite(steps[i]) ?? lastRunSpan(store)) as [
    number,
    number,
  ];
  const moved = (Array.isArray(data.moved) ? data.moved : [])
    .filter(isObject)
    .filter((m) => typeof m.name === 'string')
    .map((m) => ({
      name: m.name as string,
      from: typeof m.from === 'string' ? m.from : '',
      to: typeof m.to === 'string' ? m.to : '',
    }));
  const devices = (Array.isArray(data.devices) ? data.devices : [])
    .filter(isObject)
    .filter((d) => typeof d.device === 'string')
    .map((d) => ({
      device: d.device as string,
      ops: pair(d.ops),
      busy_ns: pair(d.busy_ns),
      peak_bytes: pair(d.peak_bytes),
    }));
  return { schema, labels, stores, stepNs, moved, devices };
}
