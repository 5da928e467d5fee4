import { describe, expect, it } from 'vitest';
import { EventColumns } from './events';
import { OP_STATES, OpTimeline, type OpSource } from './opstate';
import { PlacementStore } from './store';
import { EventKind, type EventLists, type RunRecord } from './types';
import { random, smallDocument } from './__tests__/fixtures';

const NODES = 7;
const ORIGIN = 1_000;

interface Case {
  events: EventLists;
  runs: RunRecord[];
}

/**
 * Random events of runs 0..5 (OP events of known and unknown nodes, RUN, TRANSFER and ALLOC
 * events, starts in order or not, ties included) and run records, some failed naming nodes.
 */
function randomCase(rand: () => number, count: number, inOrder: boolean): Case {
  const names = ['kind', 't0', 't1', 'node', 'device', 'stream', 'bytes', 'source', 'run', 'peer'];
  const events = Object.fromEntries(names.map((n) => [n, [] as number[]])) as EventLists;
  const kinds = [EventKind.OP, EventKind.OP, EventKind.OP, EventKind.RUN, EventKind.ALLOC];
  let clock = 0;
  for (let i = 0; i < count; i++) {
    clock += Math.floor(rand() * 3) * 10; // ties are common
    const t0 = inOrder ? clock : Math.floor(rand() * 60) * 10;
    const run = Math.floor(t0 / 100) % 6;
    events.kind.push(kinds[Math.floor(rand() * kinds.length)]);
    events.t0.push(t0);
    events.t1.push(t0 + Math.floor(rand() * 4) * 10);
    events.node.push(Math.floor(rand() * (NODES + 1))); // id NODES is no node
    events.device.push(Math.floor(rand() * 3));
    events.stream.push(Math.floor(rand() * 2));
    events.bytes.push(0);
    events.source.push(0);
    events.run.push(run);
    events.peer.push(-1);
  }
  const runs: RunRecord[] = [];
  for (let id = 0; id < 7; id++) {
    const failed = rand() < 0.4;
    const named = Math.floor(rand() * NODES);
    runs.push({
      id,
      t0: ORIGIN + id * 100,
      t1: ORIGIN + id * 100 + 90,
      status: failed ? 'error' : 'ok',
      error: failed ? `[[node 'n${named}' (MatMul) ...]] and "n${(named + 3) % NODES}"` : null,
    });
  }
  return { events, runs };
}

function sourceOf(events: EventColumns, runs: readonly RunRecord[]): OpSource {
  return {
    events,
    runs,
    originNs: ORIGIN,
    nodeIndex: (id) => (id >= 0 && id < NODES ? NODES - 1 - id : -1), // indices differ from ids
    nodeIndexByName: (name) => {
      const id = Number(name.slice(1));
      return name.startsWith('n') && id >= 0 && id < NODES ? NODES - 1 - id : -1;
    },
  };
}

function slice(lists: EventLists, from: number, to: number): EventLists {
  return Object.fromEntries(
    Object.entries(lists).map(([name, values]) => [name, values.slice(from, to)]),
  ) as EventLists;
}

/** Everything a timeline answers: spans, end time, and the states at every time that matters. */
function answers(timeline: OpTimeline, events: EventColumns): unknown {
  const times = new Set<number | null>([null]);
  for (let e = 0; e < events.count; e++) {
    for (const t of [events.t0[e], events.t1[e]]) {
      times
        .add(t - 1)
        .add(t)
        .add(t + 5);
    }
  }
  const out = new Uint8Array(NODES);
  const states = [...times].map((t) => {
    timeline.stateAt(t, out);
    return [t, Array.from(out, (code) => OP_STATES[code]).join(',')];
  });
  const { t0, t1, device, stream, run, failed } = timeline.spans;
  return {
    spans: [t0, t1, device, stream, run, failed].map((column) => Array.from(column)),
    end: timeline.endTime,
    states,
  };
}

/** A timeline folded in from scratch over the events `events` holds now. */
function fromScratch(events: EventColumns, runs: readonly RunRecord[]): OpTimeline {
  const copy = new EventColumns(events.maxEvents);
  copy.appendBatch(events);
  const timeline = new OpTimeline(NODES);
  timeline.update(sourceOf(copy, runs));
  return timeline;
}

/** Append `lists` in random batches, updating `timeline` after each; split points returned. */
function appendInBatches(
  rand: () => number,
  events: EventColumns,
  lists: EventLists,
  update: () => void,
): void {
  const count = lists.kind.length;
  let at = 0;
  while (at < count) {
    const next = Math.min(count, at + 1 + Math.floor(rand() * 12));
    events.appendLists(slice(lists, at, next));
    update();
    at = next;
  }
}

describe('OpTimeline folded in from a cursor', () => {
  for (const inOrder of [true, false]) {
    it(`equals a timeline made from scratch, over random batches (${inOrder ? 'in time order' : 'out of order'})`, () => {
      for (let seed = 1; seed <= 60; seed++) {
        const rand = random(seed);
        const { events: lists, runs } = randomCase(rand, 10 + Math.floor(rand() * 50), inOrder);
        const events = new EventColumns();
        const timeline = new OpTimeline(NODES);
        const checks = () => {
          timeline.update(sourceOf(events, runs));
          expect(answers(timeline, events), `seed ${seed}`).toEqual(
            answers(fromScratch(events, runs), events),
          );
        };
        appendInBatches(rand, events, lists, checks);
      }
    });
  }

  it('starts over when events are dropped or cleared, and follows the run records kept', () => {
    for (let seed = 100; seed < 140; seed++) {
      const rand = random(seed);
      const { events: lists, runs } = randomCase(rand, 80, seed % 2 === 0);
      const events = new EventColumns(24); // drops the oldest past 24
      const timeline = new OpTimeline(NODES);
      let records = runs.slice(0, 2);
      appendInBatches(rand, events, lists, () => {
        if (rand() < 0.15) {
          events.clear();
        }
        if (rand() < 0.3) {
          // A live view appends run records, and keeps only the newest (RUNS_LISTED).
          const first = runs.indexOf(records[0]) + (rand() < 0.3 ? 1 : 0);
          records = runs.slice(first, first + records.length + 1);
        }
        timeline.update(sourceOf(events, records));
        expect(answers(timeline, events), `seed ${seed}`).toEqual(
          answers(fromScratch(events, records), events),
        );
      });
    }
  });

  it("takes an op's latest event: the later start, and on equal starts the later recorded", () => {
    const events = new EventColumns();
    const timeline = new OpTimeline(NODES);
    const op = (t0: number, device: number) => ({
      kind: [EventKind.OP],
      t0: [t0],
      t1: [t0 + 5],
      node: [2],
      device: [device],
      run: [0],
    });
    for (const [t0, device] of [
      [50, 1],
      [50, 2], // same start, recorded later: wins
      [40, 0], // earlier start, recorded later: does not
    ]) {
      events.appendLists(op(t0, device));
      timeline.update(sourceOf(events, []));
    }
    const index = NODES - 1 - 2;
    expect(timeline.spans.device[index]).toBe(2);
    expect(timeline.spans.t0[index]).toBe(50);
  });

  it('reads only the events added since its last update', () => {
    const rand = random(7);
    const { events: lists, runs } = randomCase(rand, 200, true);
    const events = new EventColumns();
    const timeline = new OpTimeline(NODES);
    events.appendLists(slice(lists, 0, 150));
    timeline.update(sourceOf(events, runs));
    events.appendLists(slice(lists, 150, 200));
    const read = new Set<number>();
    const kinds = new Proxy(events.kind, {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) {
          read.add(Number(key));
        }
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
    const counted = Object.assign(Object.create(events) as EventColumns, { kind: kinds });
    timeline.update(sourceOf(counted, runs));
    expect([...read].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => 150 + i));
  });
});

describe('PlacementStore op states across table changes', () => {
  it('keeps the timeline when only run records came, and marks the op a new failed run names', () => {
    const doc = smallDocument();
    const failedRun = doc.runs[1];
    doc.runs = [doc.runs[0]];
    const store = PlacementStore.fromDocument(doc);
    const b = store.nodeIndexByName('tower_0/b');
    expect(store.opSpans().failed[b]).toBe(0);
    store.applyTables({ ...doc, runs: [...doc.runs, failedRun] });
    expect(store.opSpans().failed[b]).toBe(1);
    const renumbered = doc.nodes.map((n) => ({ ...n, id: n.id + 10 }));
    store.applyTables({ ...doc, nodes: renumbered, runs: [...doc.runs, failedRun] });
    // The events name the old ids: no op of the new table ran.
    expect(Array.from(store.opSpans().t0).every(Number.isNaN)).toBe(true);
  });

  it("marks only the op TensorFlow's [[node ...]] names, not others the message quotes", () => {
    const doc = smallDocument();
    doc.runs[1].error =
      "OOM when allocating tensor for 'tower_0/c': largest live tensors: a:0 from 'a' (Const)\n" +
      "\t[[node 'tower_0/c' (Relu) created at model.py:3]]";
    const store = PlacementStore.fromDocument(doc);
    const failed = store.opSpans().failed;
    expect(failed[store.nodeIndexByName('tower_0/c')]).toBe(1);
    expect(failed[store.nodeIndexByName('a')]).toBe(0);
  });
});
