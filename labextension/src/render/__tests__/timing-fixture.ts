/**
 * Event sets for the timing model's tests (timingmodel, timingsegments, timingtext): the panels
 * document's model, n overlapping ops on 4 devices x 2 streams, and runs of back-to-back ops.
 */
import { EventColumns } from '../events';
import { PlacementStore } from '../store';
import { computeTiming } from '../timingmodel';
import { COLUMN_NAMES, EventKind, TimingSource, type EventLists } from '../types';
import { panelsDocument } from './panels-fixture';

/** The panels document's store, its timing model and the runs' span. */
export function storeModel() {
  const store = PlacementStore.fromDocument(panelsDocument());
  const model = computeTiming(store.events, store.devices);
  const runs = store.runs.map((r): [number, number] => [
    r.t0 - store.originNs,
    r.t1 - store.originNs,
  ]);
  return { store, model, span: model.span(runs) };
}

/** n OP events on 4 devices x 2 streams; a lane has a bar every 80 ns, 85 ns long (overlapping). */
export function manyOps(n: number, maxEvents = n): EventColumns {
  const events = new EventColumns(maxEvents);
  const lists: Partial<EventLists> = Object.fromEntries(COLUMN_NAMES.map((c) => [c, []]));
  for (let i = 0; i < n; i++) {
    lists.kind!.push(EventKind.OP);
    lists.device!.push(i % 4);
    lists.stream!.push((i >> 2) % 2);
    lists.node!.push(i % 500);
    lists.t0!.push(i * 10);
    lists.t1!.push(i * 10 + 85);
    lists.source!.push(TimingSource.CLOCK);
    lists.run!.push(Math.floor(i / 100));
    lists.peer!.push(-1);
    lists.bytes!.push(0);
  }
  events.appendLists(lists);
  return events;
}

/** `runs` runs of `ops` back-to-back 10 ns ops on device 0, each run starting 1 ms after the last. */
export function loop(runs: number, ops: number, first = 0): Partial<EventLists> {
  const lists: Partial<EventLists> = Object.fromEntries(COLUMN_NAMES.map((c) => [c, []]));
  for (let r = first; r < first + runs; r++) {
    for (let k = 0; k < ops; k++) {
      const t0 = r * 1_000_000 + k * 10;
      const row = [EventKind.OP, t0, t0 + 10, k, 0, 0, 0, TimingSource.CLOCK, r, -1];
      COLUMN_NAMES.forEach((c, i) => lists[c]!.push(row[i]));
    }
  }
  return lists;
}
