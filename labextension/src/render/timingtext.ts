/**
 * What the timing panel says in words, apart from any drawing: its lanes' labels (device,
 * stream, busy share), cut to the room a plot leaves them, the names fitted on its bars, its
 * tooltips (an op's bar, a block of merged bars, a wait) and its note on where timings come from.
 */
import { iterationText } from './controlflow';
import { formatBytes, formatNs, shortDeviceName } from './format';
import { lastArrival, type BarRef, type LaneBars, type TimingModel } from './timingmodel';
import type { Block } from './timingsegments';
import { TIMING_SOURCE_LABELS, TimingSource, type DeviceRecord, type NodeRecord } from './types';
import { visibleText } from './visible';

/** What the words read: the model, the store's nodes and devices, and each lane's whole label. */
export interface TimingNames {
  model: TimingModel;
  nodes: ReadonlyMap<number, NodeRecord>;
  devices: readonly DeviceRecord[];
  labels: readonly string[];
}

/** Names a merged block's tooltip lists at most. */
const BLOCK_NAMES = 5;

/**
 * The lane labels take at most this share of the plot's width (their margin, which the memory
 * plot takes too), in characters of LANE_CHAR_PX: a narrow page keeps most of it for time.
 */
const LANE_SHARE = 0.35;
const LANE_CHAR_PX = 6.3;

export function deviceShort(devices: readonly DeviceRecord[], id: number): string {
  const device = devices.find((d) => d.id === id);
  return device ? shortDeviceName(device.name) : id < 0 ? 'unplaced' : `device ${id}`;
}

/** Whether devices `a` and `b` belong to different tasks (a cluster's processes). */
export function crossesTasks(devices: readonly DeviceRecord[], a: number, b: number): boolean {
  const task = (id: number) => devices.find((d) => d.id === id)?.name.split('/device:')[0];
  const [x, y] = [task(a), task(b)];
  return x !== undefined && y !== undefined && x !== y;
}

/**
 * A lane's label in parts, so a narrow plot can say less of it (laneText): its device, its stream
 * (where the device has several), and on a device's first lane the share of the runs' time its
 * ops ran and whether that is modeled.
 */
export interface LaneLabel {
  device: string;
  stream: number | null;
  busy: string | null;
  modeled: boolean;
}

/**
 * Lane labels: the device (and stream, where it has several), with busy share and "(modeled)" on
 * a device's first.
 */
export function laneLabels(
  model: TimingModel,
  devices: readonly DeviceRecord[],
  utilisation: ReadonlyMap<number, number>,
): LaneLabel[] {
  const lanesOf = new Map<number, number>();
  for (const lane of model.lanes) {
    lanesOf.set(lane.device, (lanesOf.get(lane.device) ?? 0) + 1);
  }
  return model.lanes.map((lane, i) => {
    if (lane.kind === 'transfer') {
      return { device: 'transfers', stream: null, busy: null, modeled: false };
    }
    const first = i === 0 || model.lanes[i - 1].device !== lane.device;
    // A device's one stream goes unnamed: its number (the device's id, as a trace records it)
    // would tell a reader nothing.
    const named = lane.stream >= 0 && (lanesOf.get(lane.device) ?? 0) > 1;
    return {
      device: deviceShort(devices, lane.device),
      stream: named ? lane.stream : null,
      busy: first ? busyShare(utilisation.get(lane.device) ?? 0) : null,
      modeled: first && (model.sources.get(lane.device)?.has(TimingSource.MODELED) ?? false),
    };
  });
}

/**
 * A busy share as a percentage with the digits it needs to say something: `40%`, `3%`, and two
 * significant digits under 1% (`0.04%`: a cluster task whose step is mostly messaging), never a
 * `0%` for a device whose ops ran at all.
 */
export function busyShare(share: number): string {
  const percent = share * 100;
  if (percent <= 0) {
    return '0%';
  }
  if (percent >= 1) {
    return `${Math.min(100, Math.round(percent))}%`;
  }
  const digits = Math.max(2, 1 - Math.floor(Math.log10(percent)));
  return `${Number(percent.toFixed(Math.min(digits, 6)))}%`;
}

/**
 * A lane's label in at most `chars` characters, the first that fits of: `GPU:0 stream 1 · busy
 * 40% (modeled)`; without "(modeled)" (the timing source line says it); `GPU:0 · 40%`; the device
 * cut in the middle before its share (`wor…GPU:0 · 3%`). Whole by default (the tooltip's).
 */
export function laneText(label: LaneLabel, chars = Infinity): string {
  const stream = label.stream === null ? '' : ` stream ${label.stream}`;
  const busy = label.busy === null ? '' : ` · busy ${label.busy}`;
  const short = label.busy === null ? '' : ` · ${label.busy}`;
  const options = [
    `${label.device}${stream}${busy}${label.modeled ? ' (modeled)' : ''}`,
    `${label.device}${stream}${busy}`,
    `${label.device}${stream}${short}`,
    // A device's later lanes under its first: the stream tells them apart.
    label.busy === null && stream !== '' ? stream.trim() : `${label.device}${short}`,
  ];
  const fitting = options.find((o) => o.length <= chars);
  return fitting ?? `${middleCut(label.device, chars - short.length)}${short}`;
}

/** `text` in at most `chars` characters (2 at least): its start and its end around an ellipsis. */
export function middleCut(text: string, chars: number): string {
  if (text.length <= chars) {
    return text;
  }
  const room = Math.max(2, chars) - 1;
  const end = Math.ceil(room / 2);
  return `${text.slice(0, room - end)}…${text.slice(text.length - end)}`;
}

/** A label that fits in `px` pixels at about `charPx` per character: the name, shortened. */
export function fitLabel(name: string, px: number, charPx = 6.2): string | null {
  const room = Math.floor((px - 6) / charPx);
  if (room >= name.length) {
    return name;
  }
  const leaf = name.slice(name.lastIndexOf('/') + 1);
  if (room >= leaf.length) {
    return leaf;
  }
  return room >= 4 ? `${leaf.slice(0, room - 1)}…` : null;
}

/** Characters a lane label has in a plot `widthPx` wide (laneText cuts it to them). */
export function laneChars(widthPx: number): number {
  return Math.max(12, Math.floor((LANE_SHARE * widthPx) / LANE_CHAR_PX));
}

/**
 * "Timing source — CPU:0: measured · GPU:1: modeled, simulated device. Busy: ..." (the panel's
 * note), or that there are no op timings.
 */
export function sourcesText(model: TimingModel, devices: readonly DeviceRecord[]): string {
  if (model.lanes.length === 0) {
    return 'No op timings recorded.';
  }
  const parts: string[] = [];
  for (const [device, set] of model.sources) {
    const labels = [...set].sort().map((s) => TIMING_SOURCE_LABELS[s] ?? `source ${s}`);
    const record = devices.find((d) => d.id === device);
    const simulated = record?.kind === 'simulated' ? ', simulated device' : '';
    parts.push(`${deviceShort(devices, device)}: ${labels.join('/')}${simulated}`);
  }
  return visibleText(
    `Timing source — ${parts.join(' · ')}. Busy: the share of the runs' time a ` +
      'device ran ops (the rest it waited).' +
      (model.waitBars > 0 ? ' Hatched: a task waiting for the tensors other tasks send it.' : ''),
  );
}

/**
 * Whether bar i ran inside a while loop: its frame names a LoopCond (a document whose writer
 * left the loop columns at 0 rather than -1 names none).
 */
function inLoop(nodes: TimingNames['nodes'], b: LaneBars, i: number): boolean {
  return b.iteration[i] >= 0 && nodes.get(b.frame[i])?.type === 'LoopCond';
}

/**
 * "b (MatMul) · 30 ns · GPU:0 · run 1 · iteration 2 · measured": an op's bar, or a transfer's
 * ("… · 100 B CPU:0 → GPU:0 between tasks · …").
 */
export function barText(names: TimingNames, { lane: l, index: i }: BarRef): string {
  const { model, nodes, devices } = names;
  const lane = model.lanes[l];
  const b = lane.bars;
  const node = nodes.get(b.node[i]);
  const what = node ? `${node.name} (${node.type})` : `node ${b.node[i]}`;
  const network = crossesTasks(devices, b.peer[i], b.device[i]) ? ' between tasks' : '';
  const where =
    lane.kind === 'transfer'
      ? `${formatBytes(b.bytes[i])} ${deviceShort(devices, b.peer[i])} → ${deviceShort(devices, b.device[i])}${network}`
      : names.labels[l].split(' · ')[0];
  const run = b.run[i] >= 0 ? ` · run ${b.run[i] + 1}` : '';
  // An op inside a while loop runs once per iteration: which one this bar is (counted from 1,
  // as runs are; the details pane lists them all).
  const iteration = lane.kind === 'op' && inLoop(nodes, b, i) ? iterationText(b.iteration[i]) : '';
  const source = TIMING_SOURCE_LABELS[b.source[i]] ?? '';
  return visibleText(
    `${what} · ${formatNs(b.t1[i] - b.t0[i])} · ${where}${run}${iteration}${source ? ` · ${source}` : ''}`,
  );
}

/**
 * "waiting for other tasks · 1.3 ms · worker/0 CPU:0 · before y (MatMul) · run 2 · last
 * arrived: w/read, 8 KiB from ps/0 CPU:0"
 */
export function waitText(names: TimingNames, { lane, index }: BarRef): string {
  const { model, nodes, devices } = names;
  const w = model.lanes[lane].waits;
  const node = nodes.get(w.node[index]);
  const before = node ? ` · before ${node.name} (${node.type})` : '';
  const run = w.run[index] >= 0 ? ` · run ${w.run[index] + 1}` : '';
  const arrival = lastArrival(model, lane, index);
  const transfers = model.lanes.find((l) => l.kind === 'transfer')?.bars;
  let last = ' · last arrived: a control token';
  if (w.peer[index] >= 0 && arrival >= 0 && transfers !== undefined) {
    const tensor = nodes.get(transfers.node[arrival])?.name ?? `node ${transfers.node[arrival]}`;
    const size = formatBytes(transfers.bytes[arrival]);
    last = ` · last arrived: ${tensor}, ${size} from ${deviceShort(devices, w.peer[index])}`;
  } else if (w.peer[index] >= 0) {
    last = ` · last arrived: from ${deviceShort(devices, w.peer[index])}`;
  }
  const where = names.labels[lane].split(' · ')[0];
  const took = formatNs(w.t1[index] - w.t0[index]);
  return visibleText(`waiting for other tasks · ${took} · ${where}${before}${run}${last}`);
}

/** "12 ops · 60 µs · GPU:0 · run 2 · iterations 3–4: a, b, c, d, e, … · click to zoom in" */
export function blockText(names: TimingNames, block: Block): string {
  const { model, nodes, devices } = names;
  const lane = model.lanes[block.lane];
  const { segments, k } = block;
  const b = lane.bars;
  let t0 = Infinity;
  let t1 = -Infinity;
  let bytes = 0;
  const listed: string[] = [];
  const runs = new Set<number>();
  let [first, last] = [Infinity, -Infinity]; // iterations of a while loop the ops ran in
  const routes = new Map<string, number>();
  for (let i = segments.first[k]; i < segments.end[k]; i++) {
    if (lane.kind === 'transfer' && b.device[i] !== segments.device) {
      continue; // another destination's transfer, drawn in its own colour
    }
    t0 = Math.min(t0, b.t0[i]);
    t1 = Math.max(t1, b.t1[i]);
    bytes += b.bytes[i];
    runs.add(b.run[i]);
    if (inLoop(nodes, b, i)) {
      first = Math.min(first, b.iteration[i]);
      last = Math.max(last, b.iteration[i]);
    }
    if (lane.kind === 'transfer') {
      const route = `${deviceShort(devices, b.peer[i])} → ${deviceShort(devices, b.device[i])}`;
      routes.set(route, (routes.get(route) ?? 0) + 1);
    } else if (listed.length <= BLOCK_NAMES) {
      listed.push(nodes.get(b.node[i])?.name ?? `node ${b.node[i]}`);
    }
  }
  const count = segments.count[k];
  const run = runs.size === 1 && !runs.has(-1) ? ` · run ${[...runs][0] + 1}` : '';
  const iterations =
    first > last
      ? ''
      : first === last
        ? iterationText(first)
        : ` · iterations ${first + 1}–${last + 1}`;
  const contents =
    lane.kind === 'transfer'
      ? `${formatBytes(bytes)}: ${[...routes].map(([route, n]) => `${route} ×${n}`).join(', ')}`
      : `${listed.slice(0, BLOCK_NAMES).join(', ')}${count > BLOCK_NAMES ? ', …' : ''}`;
  const what = lane.kind === 'transfer' ? 'transfers' : 'ops';
  const where = lane.kind === 'transfer' ? '' : ` · ${names.labels[block.lane].split(' · ')[0]}`;
  return visibleText(
    `${count} ${what} · ${formatNs(t1 - t0)}${where}${run}${iterations}: ${contents} · click to zoom in`,
  );
}
