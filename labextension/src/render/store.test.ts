import { describe, expect, it } from 'vitest';
import { decodeBatch } from './batch';
import { OP_STATES, PlacementStore } from './store';
import { COLUMN_ARRAYS, COLUMN_NAMES, EventKind, type EventBatch } from './types';
import { GPU0, smallDocument } from './__tests__/fixtures';

function states(store: PlacementStore, t: number | null): string[] {
  const out = new Uint8Array(store.nodes.length);
  store.stateAt(t, out);
  return Array.from(out, (code) => OP_STATES[code]);
}

function batchOf(count: number, node = 0): EventBatch {
  const batch: EventBatch = {
    count,
    kind: new Int8Array(count).fill(EventKind.OP),
    t0: new Float64Array(count),
    t1: new Float64Array(count),
    node: new Int32Array(count).fill(node),
    device: new Int16Array(count),
    stream: new Int16Array(count),
    bytes: new Float64Array(count),
    source: new Int8Array(count),
    run: new Int32Array(count),
    peer: new Int16Array(count).fill(-1),
    frame: new Int32Array(count).fill(-1),
    iteration: new Int32Array(count).fill(-1),
  };
  for (let i = 0; i < count; i++) {
    batch.t0[i] = 1000 + i;
    batch.t1[i] = 1000 + i + 0.5;
  }
  return batch;
}

describe('PlacementStore.fromDocument', () => {
  it('reads a placeviz/1 document', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    expect(store.schema).toBe('placeviz/1');
    expect(store.originNs).toBe(1000);
    expect(store.nodes.map((n) => n.name)).toEqual(['a', 'tower_0/b', 'tower_0/c']);
    expect(store.events.count).toBe(7);
    expect(store.nodeById(1)?.type).toBe('MatMul');
    expect(store.deviceById(1)?.name).toBe(GPU0);
    expect(store.deviceById(9)).toBeUndefined();
    expect(store.endTime()).toBe(300);
  });

  it('fills the defaults of an older document', () => {
    const store = PlacementStore.fromDocument({
      origin_ns: 5,
      devices: [{ id: 0, name: GPU0 }],
      nodes: [
        { id: 10, name: 'scope/x', device: 0 },
        { id: 11, name: 'y', device: 0 },
      ],
      edges: [{ src: 10, dst: 11 }],
      events: { kind: [EventKind.OP], t0: [1], t1: [4], node: [10] },
    });
    expect(store.schema).toBe('placeviz/0');
    const [x] = store.nodes;
    expect(x.reason).toBeNull();
    expect(x.shapes).toEqual([]);
    expect(x.source).toBe('');
    expect(x.scope).toBe('scope');
    expect(store.devices[0]).toMatchObject({ type: 'GPU', index: 0, kind: 'real', parent: GPU0 });
    expect(store.edges[0]).toMatchObject({ kind: 'data', bytes: null, crosses: false });
    expect(store.runs).toEqual([]);
    expect(store.events.count).toBe(1);
    expect(store.events.peer[0]).toBe(-1);
    expect(store.events.run[0]).toBe(-1);
    expect(store.events.device[0]).toBe(-1);
    const spans = store.opSpans();
    expect(spans.t0[0]).toBe(1);
    expect(spans.t1[0]).toBe(4);
    expect(Number.isNaN(spans.t0[1])).toBe(true);
    expect(states(store, 2)).toEqual(['running', 'idle']);
  });

  it('keeps an unknown schema string', () => {
    const store = PlacementStore.fromDocument({ schema: 'placeviz/7', devices: [], nodes: [] });
    expect(store.schema).toBe('placeviz/7');
    expect(store.events.count).toBe(0);
  });

  it('rejects a document without device or node arrays', () => {
    expect(() => PlacementStore.fromDocument({ devices: {}, nodes: [] })).toThrow(/devices/);
    expect(() => PlacementStore.fromDocument({ devices: [] })).toThrow(/nodes/);
    expect(() => PlacementStore.fromDocument(null)).toThrow(Error);
  });
});

describe('PlacementStore mutations', () => {
  it('grows its columns by doubling, not per event', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const capacities = new Set<number>();
    for (let i = 0; i < 300; i++) {
      store.appendBatch(batchOf(10));
      capacities.add(store.events.capacity);
    }
    expect(store.events.count).toBe(7 + 3000);
    expect(capacities.size).toBeLessThanOrEqual(3);
    expect(store.events.t0[7 + 2999]).toBe(1009);
    // the document's events are still there, in order
    expect(store.events.t0[2]).toBe(10);
  });

  it('holds at most maxEvents events, dropping the oldest and counting them', () => {
    const store = PlacementStore.fromDocument(smallDocument(), 1000);
    expect(store.events.maxEvents).toBe(1000);
    for (let i = 0; i < 30; i++) {
      const batch = batchOf(100, i);
      store.appendBatch(batch);
      expect(store.events.count).toBeLessThanOrEqual(1000);
      expect(store.events.capacity).toBeLessThanOrEqual(1000);
    }
    const total = 7 + 3000;
    expect(store.events.total).toBe(total);
    expect(store.droppedEvents).toBe(total - store.events.count);
    // What is kept is the newest, in order: the last batch's node ends the columns.
    expect(store.events.node[store.events.count - 1]).toBe(29);
    expect(store.events.node[store.events.count - 100]).toBe(29);
    // Dropping happens an eighth of the limit at a time, not event by event.
    expect(store.events.count).toBeGreaterThanOrEqual(1000 - 125 - 100);
    // A batch larger than the limit keeps its newest events.
    store.appendBatch(batchOf(2500, 77));
    expect(store.events.count).toBe(1000);
    expect(store.droppedEvents).toBe(total + 2500 - 1000);
    // Clearing forgets the count and starts a new generation (views' cursors restart).
    const generation = store.events.generation;
    store.reset();
    expect(store.droppedEvents).toBe(0);
    expect(store.events.generation).toBe(generation + 1);
    expect(() => PlacementStore.fromDocument(smallDocument(), 0)).toThrow(/maxEvents/);
  });

  it('bounds the JSON events of a document too', () => {
    const doc = smallDocument();
    const store = PlacementStore.fromDocument(doc, 4);
    expect(store.events.count).toBe(4);
    expect(store.droppedEvents).toBe(3);
    expect([...store.events.t0.subarray(0, 4)]).toEqual([40, 200, 200, 220]);
  });

  it('tells listeners what changed and drops events on reset', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const heard: string[] = [];
    const stop = store.onChange((change) => heard.push(change));
    store.appendLists({ kind: [EventKind.OP], t0: [400], t1: [500], node: [2] });
    expect(store.endTime()).toBe(500);
    store.applyTables({ ...smallDocument(), runs: [] });
    expect(store.events.count).toBe(8);
    store.reset();
    expect(store.events.count).toBe(0);
    expect(store.endTime()).toBe(0);
    stop();
    store.reset();
    expect(heard).toEqual(['events', 'tables', 'events']);
  });

  it('recomputes spans after a batch', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    expect(store.opSpans().t0[0]).toBe(200);
    store.appendBatch(batchOf(1, 0));
    expect(store.opSpans().t0[0]).toBe(1000);
  });
});

describe('PlacementStore.stateAt', () => {
  const store = PlacementStore.fromDocument(smallDocument());

  it('follows the first run', () => {
    expect(states(store, -1)).toEqual(['idle', 'idle', 'idle']);
    expect(states(store, 5)).toEqual(['running', 'waiting', 'waiting']);
    expect(states(store, 50)).toEqual(['done', 'done', 'running']);
    expect(states(store, 150)).toEqual(['done', 'done', 'done']);
  });

  it('shows the failed run and the op its error names', () => {
    expect(states(store, 210)).toEqual(['running', 'waiting', 'done']);
    expect(states(store, 250)).toEqual(['done', 'running', 'done']);
    expect(states(store, 300)).toEqual(['done', 'failed', 'done']);
    expect(states(store, null)).toEqual(['done', 'failed', 'done']);
  });

  it('reports latest spans with the failure flag', () => {
    const spans = store.opSpans();
    expect(Array.from(spans.t0)).toEqual([200, 220, 40]);
    expect(Array.from(spans.t1)).toEqual([220, 300, 100]);
    expect(Array.from(spans.device)).toEqual([0, 1, 2]);
    expect(Array.from(spans.failed)).toEqual([0, 1, 0]);
  });
});

/** Little-endian buffers for `columns`, as the kernel sends them. */
function encode(values: Record<string, number[]>, count: number): ArrayBuffer[] {
  return COLUMN_NAMES.map((name) => {
    const size = COLUMN_ARRAYS[name].BYTES_PER_ELEMENT;
    const view = new DataView(new ArrayBuffer(count * size));
    values[name].forEach((v, i) => {
      const at = i * size;
      if (size === 1) view.setInt8(at, v);
      else if (size === 2) view.setInt16(at, v, true);
      else if (size === 4) view.setInt32(at, v, true);
      else view.setFloat64(at, v, true);
    });
    return view.buffer;
  });
}

const SAMPLE = {
  kind: [2, 3, 4],
  t0: [1.5, 2.25, 1e12],
  t1: [3, 4, 1e12 + 7],
  node: [5, -1, 70000],
  device: [1, 2, -1],
  stream: [0, 3, 300],
  bytes: [24, 4096, 2 ** 40],
  source: [1, 2, 3],
  run: [0, 1, 123456],
  peer: [-1, 1, 2],
  frame: [-1, 79, 2 ** 30],
  iteration: [-1, 0, 49],
};

describe('decodeBatch', () => {
  it('round-trips little-endian buffers', () => {
    const batch = decodeBatch({ count: 3 }, encode(SAMPLE, 3));
    expect(batch.count).toBe(3);
    for (const name of COLUMN_NAMES) {
      expect(Array.from(batch[name]), name).toEqual(SAMPLE[name]);
    }
    expect(batch.node).toBeInstanceOf(Int32Array);
    expect(batch.t0).toBeInstanceOf(Float64Array);
  });

  it('reads DataViews at unaligned offsets inside a larger buffer', () => {
    const views = encode(SAMPLE, 3).map((buffer) => {
      const shared = new Uint8Array(buffer.byteLength + 8);
      shared.set(new Uint8Array(buffer), 3);
      return new DataView(shared.buffer, 3, buffer.byteLength);
    });
    const batch = decodeBatch({ count: 3 }, views);
    for (const name of COLUMN_NAMES) {
      expect(Array.from(batch[name]), name).toEqual(SAMPLE[name]);
    }
  });

  it('names the column whose length is wrong', () => {
    const buffers = encode(SAMPLE, 3);
    buffers[4] = new ArrayBuffer(4);
    expect(() => decodeBatch({ count: 3 }, buffers)).toThrow(/column 'device'/);
    expect(() => decodeBatch({ count: 3 }, buffers.slice(0, 9))).toThrow(
      new RegExp(`${COLUMN_NAMES.length} buffers`),
    );
  });

  it('feeds a store', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    store.appendBatch(decodeBatch({ count: 3 }, encode(SAMPLE, 3)));
    expect(store.events.count).toBe(10);
    expect(store.events.bytes[9]).toBe(2 ** 40);
    expect(store.events.peer[8]).toBe(1);
  });
});

describe('PlacementStore.setProgress', () => {
  const live = { run: 2, waiting: [2], running: [1], done: [0] };

  it('holds a copy of the snapshot and tells listeners, without touching the events', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const heard: string[] = [];
    store.onChange((change) => heard.push(change));
    expect(store.progress).toBeNull();
    const sent = { run: 2, waiting: [2], running: [1], done: [0] };
    store.setProgress(sent);
    sent.waiting.push(0);
    expect(store.progress).toEqual(live);
    expect(store.events.count).toBe(7);
    store.setProgress({ run: 2, waiting: [], running: [2], done: [0, 1] });
    expect(store.progress?.running).toEqual([2]);
    store.setProgress(null);
    expect(store.progress).toBeNull();
    store.setProgress(null); // nothing to clear: no notification
    expect(heard).toEqual(['progress', 'progress', 'progress']);
  });

  it('lays the run in flight over the live view only', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    store.setProgress({ run: 2, waiting: [2, 99], running: [1], done: [0] });
    expect(states(store, null)).toEqual(['done', 'running', 'waiting']);
    // scrubbing the past ignores it
    expect(states(store, 50)).toEqual(['done', 'done', 'running']);
    expect(states(store, 300)).toEqual(['done', 'failed', 'done']);
    store.setProgress(null);
    expect(states(store, null)).toEqual(['done', 'failed', 'done']);
  });

  it('drops the snapshot when the RUN event of its run arrives, and on reset', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const heard: string[] = [];
    store.onChange((change) => heard.push(change));
    store.setProgress(live);
    // OP events of run 2 and the RUN event of another run leave it
    store.appendLists({
      kind: [EventKind.OP, EventKind.RUN],
      t0: [400, 0],
      t1: [500, 1],
      run: [2, 7],
    });
    expect(store.progress).toEqual(live);
    const runEnd = batchOf(2, 0);
    runEnd.kind[1] = EventKind.RUN;
    runEnd.run.fill(2);
    store.appendBatch(runEnd);
    expect(store.progress).toBeNull();
    expect(store.events.count).toBe(11);
    expect(heard).toEqual(['progress', 'events', 'events', 'progress']);
    heard.length = 0;
    store.setProgress(live);
    store.reset();
    expect(store.progress).toBeNull();
    expect(heard).toEqual(['progress', 'events', 'progress']);
  });
});

describe('PlacementStore.toDocument', () => {
  it('writes back the document it was read from, with the kinds tables', () => {
    const doc = smallDocument();
    const written = PlacementStore.fromDocument(doc).toDocument();
    expect(written.schema).toBe('placeviz/1');
    expect(written.origin_ns).toBe(1000);
    expect(written.runs).toMatchObject(doc.runs);
    expect(written.nodes.map((n) => [n.id, n.name, n.device])).toEqual(
      doc.nodes.map((n) => [n.id, n.name, n.device]),
    );
    expect(written.edges).toEqual(doc.edges);
    for (const name of COLUMN_NAMES) {
      // The fixture has no loop columns: outside loops (-1), as the contract fills them.
      expect(written.events[name]).toEqual(doc.events[name] ?? new Array(7).fill(-1));
    }
    expect(written.event_kinds).toMatchObject({ '0': 'run', '2': 'op', '3': 'transfer' });
    expect(written.timing_sources).toMatchObject({ '1': 'clock', '2': 'cuda-event' });
    expect(written).not.toHaveProperty('prediction');
    expect(JSON.parse(JSON.stringify(written))).toEqual(written); // plain JSON: no typed arrays
  });

  it('holds the events appended live, in the codes its kinds tables name', () => {
    // A document of another version: its op kind is code 7, its run kind code 5.
    const doc = {
      ...smallDocument(),
      event_kinds: { '5': 'run', '7': 'op' },
      events: { ...smallDocument().events, kind: [5, 7, 7, 7, 5, 7, 7] },
    };
    const store = PlacementStore.fromDocument(doc);
    store.appendBatch(batchOf(2, 2));
    const written = store.toDocument();
    expect(written.events.kind).toEqual([0, 2, 2, 2, 0, 2, 2, 2, 2]);
    expect(written.events.t0.slice(7)).toEqual([1000, 1001]);
    expect(written.events.node.slice(7)).toEqual([2, 2]);
    const again = PlacementStore.fromDocument(written);
    expect(Array.from(again.events.kind.subarray(0, again.events.count))).toEqual(
      written.events.kind,
    );
    expect(again.opSpans()).toEqual(store.opSpans());
  });

  it('holds the latest run only above maxEvents, as the kernel’s saved output', () => {
    const store = PlacementStore.fromDocument({ ...smallDocument(), events: {} });
    const batch = batchOf(6);
    batch.run.set([0, 0, -1, 1, 1, -1]);
    store.appendBatch(batch);
    expect(store.toDocument(6).events.run).toEqual([0, 0, -1, 1, 1, -1]);
    const latest = store.toDocument(5).events;
    expect(latest.run).toEqual([-1, 1, 1, -1]);
    expect(latest.t0).toEqual([1002, 1003, 1004, 1005]);
    expect(store.toDocument().events.run.length).toBe(6);
  });

  it('keeps a prediction', () => {
    const store = PlacementStore.fromDocument({ ...smallDocument(), prediction: 'on GPU:1?' });
    expect(store.toDocument().prediction).toBe('on GPU:1?');
  });
});
