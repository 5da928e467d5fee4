/**
 * What the timing panel says in words, apart from any drawing: its lanes' labels (device,
 * stream, busy share), cut to the room a plot leaves them, and the names fitted on its bars.
 */
import { shortDeviceName } from './format';
import type { TimingModel } from './timingmodel';
import { TimingSource, type DeviceRecord } from './types';

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
