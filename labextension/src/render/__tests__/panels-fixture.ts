/**
 * A small document for the memory, timing and scrubber tests: a CPU, a real GPU with two streams
 * and a simulated GPU, one run 0..100 ns, a transfer, and ALLOC/FREE pairs whose totals are easy
 * to check by hand. Node 3's name is HTML, to check that it is never parsed as such.
 */
import { EventKind as K, TimingSource as S, type PlacementDocument } from '../types';
import type { PlotlyModule } from '../plotly';
import { columns, device, node, type EventRow } from './fixtures';

export const CPU = '/job:localhost/replica:0/task:0/device:CPU:0';
export const GPU0 = '/job:localhost/replica:0/task:0/device:GPU:0';
export const GPU1 = '/job:localhost/replica:0/task:0/device:GPU:1';
export const EVIL = '<img src=x onerror=alert(1)>';

export function panelsDocument(): PlacementDocument {
  return {
    schema: 'placeviz/1',
    origin_ns: 5000,
    devices: [
      device(0, CPU, { memory_limit: 0 }),
      device(1, GPU0, { memory_limit: 1 << 30 }),
      device(2, GPU1, { kind: 'simulated', memory_limit: 600 }),
    ],
    nodes: [
      node(0, 'a', { device: 0, type: 'Const' }),
      node(1, 'b', { device: 1, type: 'MatMul' }),
      node(2, 'c', { device: 2, type: 'Relu' }),
      node(3, EVIL, { device: 1, type: 'Evil' }),
    ],
    edges: [
      { src: 0, dst: 1, kind: 'data', bytes: 100, crosses: true },
      { src: 1, dst: 2, kind: 'data', bytes: 400, crosses: true },
      { src: 3, dst: 2, kind: 'data', bytes: 300, crosses: true },
    ],
    runs: [{ id: 0, t0: 5000, t1: 5100, status: 'ok', error: null, fetches: ['c'] }],
    // kind, t0, t1, node, device, stream, bytes, source, run, peer
    events: columns([
      [K.RUN, 0, 100, -1, -1, -1, 0, S.CLOCK, 0, -1],
      [K.OP, 0, 10, 0, 0, -1, 100, S.CLOCK, 0, -1],
      [K.ALLOC, 0, 0, 0, 0, -1, 100, S.CLOCK, 0, -1],
      [K.TRANSFER, 8, 12, 0, 1, -1, 100, S.CLOCK, 0, 0],
      [K.OP, 10, 40, 1, 1, 0, 400, S.CUDA_EVENT, 0, -1],
      [K.ALLOC, 10, 10, 1, 1, 0, 400, S.CUDA_EVENT, 0, -1],
      [K.OP, 10, 30, 3, 1, 1, 300, S.CUDA_EVENT, 0, -1],
      [K.ALLOC, 10, 10, 3, 1, 1, 300, S.CUDA_EVENT, 0, -1],
      [K.FREE, 30, 30, 3, 1, 1, 300, S.CUDA_EVENT, 0, -1],
      [K.OP, 40, 100, 2, 2, 0, 200, S.MODELED, 0, -1],
      [K.FREE, 40, 40, 0, 0, -1, 0, S.CLOCK, 0, -1], // no bytes: frees what node 0 allocated
      [K.ALLOC, 40, 40, 2, 2, 0, 200, S.MODELED, 0, -1],
      [K.FREE, 100, 100, 1, 1, 0, 400, S.CUDA_EVENT, 0, -1],
    ]),
  };
}

export const PS_CPU = '/job:ps/replica:0/task:0/device:CPU:0';
export const WORKER_CPU = '/job:worker/replica:0/task:0/device:CPU:0';

/**
 * A cluster step (run 0, 0..100 ns) on a ps task and a worker task: the ps task reads its variable
 * w (0..10) and sends it to the worker (10..60, 8 KiB), whose stage waits for it (5..60) before
 * its matmul y (60..80). A scalar s from the ps task arrived earlier (10..40), and a tensor for
 * a later stage after the wait (60..70). Streams are device ids, as a trace records them.
 */
export function clusterDocument(): PlacementDocument {
  return {
    schema: 'placeviz/1',
    origin_ns: 1000,
    devices: [device(0, PS_CPU), device(1, WORKER_CPU)],
    nodes: [
      node(0, 'w/read', { device: 0 }),
      node(1, 'y', { device: 1, type: 'MatMul' }),
      node(2, 's', { device: 0 }),
      node(3, 'later', { device: 0 }),
    ],
    edges: [{ src: 0, dst: 1, kind: 'data', bytes: 8192, crosses: true }],
    runs: [{ id: 0, t0: 1000, t1: 1100, status: 'ok', error: null, fetches: ['y'] }],
    // kind, t0, t1, node, device, stream, bytes, source, run, peer
    events: columns([
      [K.RUN, 0, 100, -1, -1, -1, 0, S.CLOCK, 0, -1],
      [K.OP, 0, 10, 0, 0, 0, 8192, S.CLOCK, 0, -1],
      [K.WAIT, 5, 60, 1, 1, 1, 0, S.CLOCK, 0, 0],
      [K.TRANSFER, 10, 40, 2, 1, 1, 4, S.CLOCK, 0, 0],
      [K.TRANSFER, 10, 60, 0, 1, 1, 8192, S.CLOCK, 0, 0],
      [K.OP, 60, 80, 1, 1, 1, 1024, S.CLOCK, 0, -1],
      [K.TRANSFER, 60, 70, 3, 1, 1, 4, S.CLOCK, 0, 0],
    ]),
  };
}

/** A plotly stand-in that records calls (jsdom cannot run plotly: no SVG layout). */
export function fakePlotly() {
  const calls: { method: string; args: unknown[] }[] = [];
  const record =
    (method: string) =>
    (...args: unknown[]) => {
      calls.push({ method, args });
      const el = args[0] as HTMLElement & { on?: unknown };
      if (method === 'react' || method === 'newPlot') {
        el.on = () => undefined;
      }
      return Promise.resolve(el);
    };
  const plotly = {
    newPlot: record('newPlot'),
    react: record('react'),
    relayout: record('relayout'),
    restyle: record('restyle'),
    purge: (el: HTMLElement) => {
      calls.push({ method: 'purge', args: [el] });
    },
  };
  return { plotly: plotly as unknown as PlotlyModule, calls };
}

/** A card reading (NVML) row: kind, t0 = t1, node -1, device, stream = device, bytes, clock. */
export const cardRow = (t: number, device: number, bytes: number, run = 0): EventRow => [
  K.CARD_MEMORY,
  t,
  t,
  -1,
  device,
  device,
  bytes,
  1,
  run,
  -1,
];

export const GiB = 1024 ** 3;

/**
 * The panels document with GPU:0's card (device 1) read every 10 ns during the run, out of
 * order as a sampler thread may record them: 2 GiB at the start, 3 GiB from 50 ns on.
 */
export function withCards() {
  const doc = panelsDocument();
  const rows = [cardRow(100, 1, 3 * GiB), cardRow(0, 1, 2 * GiB)];
  for (let t = 10; t < 100; t += 10) {
    rows.push(cardRow(t, 1, t < 50 ? 2 * GiB : 3 * GiB));
  }
  const more = columns(rows);
  for (const name of Object.keys(more) as (keyof typeof more)[]) {
    doc.events[name] = [...doc.events[name], ...more[name]];
  }
  return doc;
}
