/**
 * Reading a comparison document (schema placeviz-compare/1, contract.gen.ts ComparisonDocument:
 * two placements of one graph and the kernel's summary of what differs) into a store per
 * placement. Optional parts get defaults; what cannot be shown throws an Error that says why.
 */
import { COMPARE_SCHEMA, type DeviceDelta, type MovedOp } from './contract.gen';
import { isObject, numberOr, stringOr } from './normalize';
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

/** [first, second] numbers of a DeviceDelta field; a side the device is absent from is 0. */
function pair(value: unknown): number[] {
  const list = Array.isArray(value) ? value : [];
  return [numberOr(list[0], 0), numberOr(list[1], 0)];
}

/** [first, second] peak bytes; null where that side recorded no memory (never read as 0). */
function peaks(value: unknown): (number | null)[] {
  const list = Array.isArray(value) ? value : [];
  return [0, 1].map((i) => (list[i] === null ? null : numberOr(list[i], 0)));
}

/**
 * A store's last step, [start, end] in its document's ns: from its last run's first op or
 * transfer to its last (the kernel's step_ns), else that run's record; null without runs.
 */
export function lastStep(store: PlacementStore): [number, number] | null {
  const last = store.runs[store.runs.length - 1];
  if (last === undefined) {
    return null;
  }
  const active = store.activity().spans.get(last.id);
  return active ?? [last.t0 - store.originNs, Math.max(last.t0, last.t1) - store.originNs];
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
  const schema = stringOr(data.schema, COMPARE_SCHEMA);
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
  const span = (store: PlacementStore) => {
    const step = lastStep(store);
    return step === null ? NaN : step[1] - step[0];
  };
  const stepNs = stores.map((store, i) => numberOr(steps[i], span(store))) as [number, number];
  const moved = (Array.isArray(data.moved) ? data.moved : [])
    .filter(isObject)
    .filter((m) => typeof m.name === 'string')
    .map((m) => ({
      name: m.name as string,
      from: stringOr(m.from, ''),
      to: stringOr(m.to, ''),
    }));
  const devices = (Array.isArray(data.devices) ? data.devices : [])
    .filter(isObject)
    .filter((d) => typeof d.device === 'string')
    .map((d) => ({
      device: d.device as string,
      ops: pair(d.ops),
      busy_ns: pair(d.busy_ns),
      peak_bytes: peaks(d.peak_bytes),
    }));
  return { schema, labels, stores, stepNs, moved, devices };
}
