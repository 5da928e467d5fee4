// @vitest-environment jsdom
import { describe, expect, it, vi } from 'vitest';
import { RUNS_LISTED } from '../render/types';
import { PlacementStore } from '../render/store';
import { COLUMN_NAMES, EventKind, type EventBatch } from '../render/types';
import { smallDocument } from '../render/__tests__/fixtures';
import {
  applyDocument,
  applyMessage,
  EMPTY_DOCUMENT,
  inspectorDocument,
  PlacementInspectorModel,
  PlacementInspectorView,
} from './widget';

/** The buffers of an `events` message (one per column), as DataViews into one larger buffer (as ipywidgets). */
function eventBuffers(count: number, node: number): DataView[] {
  const batch: EventBatch = {
    count,
    kind: new Int8Array(count).fill(EventKind.OP),
    t0: Float64Array.from({ length: count }, (_, i) => 400 + 10 * i),
    t1: Float64Array.from({ length: count }, (_, i) => 405 + 10 * i),
    node: new Int32Array(count).fill(node),
    device: new Int16Array(count).fill(1),
    stream: new Int16Array(count),
    bytes: new Float64Array(count),
    source: new Int8Array(count).fill(1),
    run: new Int32Array(count).fill(2),
    peer: new Int16Array(count).fill(-1),
    frame: new Int32Array(count).fill(-1),
    iteration: new Int32Array(count).fill(-1),
  };
  return COLUMN_NAMES.map((name) => {
    const column = batch[name];
    const copy = new Uint8Array(column.byteLength + 3);
    copy.set(new Uint8Array(column.buffer, column.byteOffset, column.byteLength), 3);
    return new DataView(copy.buffer, 3, column.byteLength);
  });
}

describe('applyMessage', () => {
  it('appends the events of an update', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const before = store.events.count;
    const changes: string[] = [];
    store.onChange((change) => changes.push(change));
    applyMessage(store, { kind: 'update', count: 4 }, eventBuffers(4, 2));
    expect(store.events.count).toBe(before + 4);
    expect(Array.from(store.events.t0.subarray(before, before + 4))).toEqual([400, 410, 420, 430]);
    expect(store.events.node[before]).toBe(2);
    expect(store.endTime()).toBe(435);
    expect(changes).toEqual(['events']);
  });

  it('replaces the tables, appends runs and keeps the events', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const doc = smallDocument();
    const tables = {
      origin_ns: doc.origin_ns,
      devices: doc.devices,
      nodes: [...doc.nodes, { ...doc.nodes[0], id: 9, name: 'new_op' }],
      edges: doc.edges,
    };
    const runs = [{ id: 2, t0: 1400, t1: 1500, status: 'ok' as const }];
    applyMessage(store, { kind: 'update', tables, runs, count: 0 });
    expect(store.nodes.map((n) => n.name)).toContain('new_op');
    expect(store.runs.map((r) => r.id)).toEqual([...doc.runs.map((r) => r.id), 2]);
    expect(store.events.count).toBe(7);
  });

  it('appends runs alone without touching the graph', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const nodes = store.nodes;
    applyMessage(store, { kind: 'update', runs: [{ id: 5, t0: 1, t1: 2, status: 'error' }] });
    expect(store.runs[store.runs.length - 1].status).toBe('error');
    expect(store.nodes).toEqual(nodes);
  });

  it('forgets events and runs on reset, then takes the new session', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const doc = smallDocument();
    const tables = { origin_ns: 0, devices: doc.devices, nodes: doc.nodes, edges: doc.edges };
    applyMessage(store, { kind: 'update', reset: true, tables, count: 2 }, eventBuffers(2, 1));
    expect(store.events.count).toBe(2);
    expect(store.runs.length).toBe(0);
    expect(store.nodes.length).toBe(3);
  });

  it('keeps the newest RUNS_LISTED run records and counts the events a fast loop skipped', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const runs = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({
        id: from + i,
        t0: 1,
        t1: 2,
        status: 'ok' as const,
      }));
    applyMessage(store, { kind: 'update', runs: runs(2, 700), skipped: 300 });
    applyMessage(
      store,
      { kind: 'update', runs: runs(702, 700), skipped: 200, count: 1 },
      eventBuffers(1, 0),
    );
    expect(store.runs.length).toBe(RUNS_LISTED);
    expect(store.runs[store.runs.length - 1].id).toBe(1401);
    expect(store.runs[0].id).toBe(1402 - RUNS_LISTED);
    expect(store.skippedEvents).toBe(500);
    applyMessage(store, { kind: 'update', reset: true, skipped: 7 });
    expect(store.skippedEvents).toBe(7); // counted after the reset, for the new session
  });

  it('rejects unknown kinds and malformed batches, changing nothing', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    expect(() => applyMessage(store, { kind: 'nope' })).toThrow(/unknown message kind/);
    expect(() =>
      applyMessage(store, { kind: 'update', reset: true, count: 4 }, eventBuffers(3, 0)),
    ).toThrow();
    expect(store.events.count).toBe(7);
  });
});

describe('applyMessage progress', () => {
  const live = { run: 2, waiting: [2], running: [1], done: [0] };

  it('applies a progress snapshot alone', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const changes: string[] = [];
    store.onChange((change) => changes.push(change));
    applyMessage(store, { kind: 'update', count: 0, progress: live });
    expect(store.progress).toEqual(live);
    expect(store.events.count).toBe(7);
    expect(changes).toEqual(['progress']);
    applyMessage(store, { kind: 'update', count: 0 }); // no progress field: kept
    expect(store.progress).toEqual(live);
  });

  it('appends the batch, then clears the snapshot on progress: null', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    applyMessage(store, { kind: 'update', count: 0, progress: live });
    const changes: string[] = [];
    store.onChange((change) => changes.push(change));
    const runs = [{ id: 2, t0: 1400, t1: 1500, status: 'ok' as const }];
    applyMessage(store, { kind: 'update', count: 2, runs, progress: null }, eventBuffers(2, 2));
    expect(store.events.count).toBe(9);
    expect(store.runs.map((r) => r.id)).toEqual([0, 1, 2]);
    expect(store.progress).toBeNull();
    expect(changes).toEqual(['tables', 'events', 'progress']);
  });

  it('rejects a malformed progress before changing anything', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    applyMessage(store, { kind: 'update', count: 0, progress: live });
    const changes: string[] = [];
    store.onChange((change) => changes.push(change));
    for (const progress of [
      5,
      'running',
      [1, 2],
      { waiting: [], running: [], done: [] },
      { run: '2', waiting: [], running: [], done: [] },
      { run: 2, waiting: [1], running: [], done: 'all' },
      { run: 2, waiting: ['a'], running: [], done: [] },
      { run: 2, waiting: [], running: [1.5], done: [] },
      { run: 2, waiting: [], done: [] },
    ]) {
      expect(
        () =>
          applyMessage(
            store,
            { kind: 'update', reset: true, count: 2, runs: [], progress },
            eventBuffers(2, 1),
          ),
        JSON.stringify(progress),
      ).toThrow(/update\.progress/);
    }
    expect(changes).toEqual([]);
    expect(store.events.count).toBe(7);
    expect(store.runs.length).toBe(2);
    expect(store.progress).toEqual(live);
  });
});

describe('applyDocument', () => {
  it('updates a store in place when the schema is the same', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const doc = smallDocument();
    doc.nodes[0].name = 'renamed';
    doc.events = { ...doc.events, kind: doc.events.kind.slice(0, 2) };
    const result = applyDocument(store, doc);
    expect(result).toBe(store);
    expect(store.nodes[0].name).toBe('renamed');
    expect(store.events.count).toBe(2);
  });

  it("takes a replaced document's prediction, or its lack of one, in place", () => {
    const store = PlacementStore.fromDocument(smallDocument());
    expect(store.prediction).toBeNull();
    const predicted = { ...smallDocument(), prediction: 'what if b ran on the CPU?' };
    expect(applyDocument(store, predicted)).toBe(store);
    expect(store.prediction).toBe('what if b ran on the CPU?');
    applyDocument(store, smallDocument());
    expect(store.prediction).toBeNull();
  });

  it('makes a new store for another schema, or from nothing', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    const other = applyDocument(store, { ...smallDocument(), schema: 'placeviz/0' });
    expect(other).not.toBe(store);
    expect(other.schema).toBe('placeviz/0');
    expect(applyDocument(null, null).nodes.length).toBe(0);
  });

  it('throws on garbage without touching the store', () => {
    const store = PlacementStore.fromDocument(smallDocument());
    expect(() => applyDocument(store, { devices: 'no' })).toThrow();
    expect(store.nodes.length).toBe(3);
  });
});

describe('PlacementInspectorModel', () => {
  function model(doc: unknown) {
    return new PlacementInspectorModel({ document: doc }, {
      model_id: 'test',
      widget_manager: {},
    } as never);
  }

  it('declares the module, names and versions the Python widget uses', () => {
    const defaults = model(null).defaults() as Record<string, unknown>;
    expect(defaults).toMatchObject({
      _model_name: 'PlacementInspectorModel',
      _view_name: 'PlacementInspectorView',
      _model_module: 'placeviz',
      _view_module: 'placeviz',
      _model_module_version: '^0.1.0',
      _view_module_version: '^0.1.0',
      document: null,
    });
  });

  it('keeps a store built from the document trait and applies custom messages', () => {
    const m = model(smallDocument());
    expect(m.store.nodes.length).toBe(3);
    m.trigger('msg:custom', { kind: 'update', count: 2 }, eventBuffers(2, 0));
    expect(m.store.events.count).toBe(9);
    m.trigger('msg:custom', { kind: 'update', reset: true, count: 0 }, []);
    expect(m.store.events.count).toBe(0);
  });

  it('gives its document, live messages included, until it is closed', async () => {
    const m = new PlacementInspectorModel({ document: smallDocument() }, {
      model_id: 'open-model',
      widget_manager: {},
    } as never);
    m.trigger('msg:custom', { kind: 'update', count: 2 }, eventBuffers(2, 0));
    expect(inspectorDocument('open-model')?.events.t0.slice(7)).toEqual([400, 410]);
    expect(inspectorDocument('other-model')).toBeNull();
    await m.close(true);
    expect(inspectorDocument('open-model')).toBeNull();
  });

  it('replaces the document in place on change:document', () => {
    const m = model(null);
    const store = m.store;
    expect(store.nodes.length).toBe(0);
    m.set('document', smallDocument());
    expect(m.store).toBe(store);
    expect(store.nodes.length).toBe(3);
    expect(store.events.count).toBe(7);
  });

  it('applies the progress of custom messages', () => {
    const m = model(smallDocument());
    m.trigger(
      'msg:custom',
      { kind: 'update', count: 0, progress: { run: 3, waiting: [0], running: [], done: [] } },
      [],
    );
    expect(m.store.progress?.run).toBe(3);
    m.trigger('msg:custom', { kind: 'update', count: 0, progress: null }, []);
    expect(m.store.progress).toBeNull();
  });

  it('records a bad message instead of throwing', () => {
    const m = model(EMPTY_DOCUMENT);
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    m.trigger('msg:custom', { kind: 'bogus' }, []);
    expect(m.error).toMatch(/unknown message kind/);
    expect(spy).toHaveBeenCalled();
  });

  it('is what the view class draws, marked as the live view of its model', () => {
    vi.spyOn(console, 'error').mockImplementation(() => undefined); // jsdom has no canvas
    const view = new PlacementInspectorView({ model: model(smallDocument()) } as never);
    view.render();
    expect(view.el.querySelector('.placeviz-inspector')).not.toBeNull();
    expect(view.el.getAttribute('data-placeviz-model')).toBe('test');
    view.remove();
  });
});
