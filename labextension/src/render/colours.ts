/**
 * Colours: one per device (logical GPUs as shades of their physical GPU's hue, CPUs grey, or
 * greyish tints when several cluster tasks have one, so a teacher tells the ps tasks apart), per op
 * state, and sequential scales for op time and memory. Device colours depend only on the device
 * table, so every view of a document agrees on them.
 */
import type { DeviceRecord, OpState } from './types';

export interface DeviceStyle {
  colour: string;
  /** Simulated devices are outlined dashed on the canvas and in the legend. */
  simulated: boolean;
}

/** Colour of a folded box whose ops are on several devices, and of an unplaced op. */
export const MIXED_COLOUR = '#c8c2b4';
export const UNPLACED_COLOUR = '#f2f2f2';
/** Ops with no value in the time or memory scale. */
export const NO_VALUE_COLOUR = '#e4e4e4';

export const STATE_COLOURS: Record<OpState, string> = {
  idle: '#e4e4e4',
  waiting: '#f2c94c',
  running: '#2f80ed',
  done: '#27ae60',
  failed: '#eb5757',
};

/** Distinct hues for physical accelerators, in the order their names sort. */
const HUES = [210, 28, 130, 275, 350, 180, 48, 310, 95, 240];

/** Muted hues for the CPUs of several cluster tasks (low saturation: they stay host-like). */
const CPU_HUES = [35, 330, 90, 170, 260, 200];

/** Whether a device is a host CPU (drawn grey). */
function isCpu(device: DeviceRecord): boolean {
  return device.type.toUpperCase() === 'CPU';
}

/** Sort key so GPU:2 comes before GPU:10. */
function naturalKey(name: string): string {
  return name.replace(/\d+/g, (digits) => digits.padStart(8, '0'));
}

/** The style of every device, by device id. */
export function devicePalette(devices: readonly DeviceRecord[]): Map<number, DeviceStyle> {
  const palette = new Map<number, DeviceStyle>();
  const groups = new Map<string, DeviceRecord[]>();
  for (const device of devices) {
    const key = (isCpu(device) ? 'cpu\u0000' : 'acc\u0000') + device.parent;
    const group = groups.get(key) ?? [];
    group.push(device);
    groups.set(key, group);
  }
  const accelerators = [...groups.keys()]
    .filter((key) => key.startsWith('acc'))
    .sort((a, b) => naturalKey(a).localeCompare(naturalKey(b)));
  const cpus = [...groups.keys()].filter((key) => key.startsWith('cpu')).sort();
  accelerators.forEach((key, rank) => {
    const hue = HUES[rank % HUES.length];
    const lightnessShift = Math.floor(rank / HUES.length) * 8;
    shades(groups.get(key) ?? [], 0, (device, lightness) => {
      palette.set(device.id, {
        colour: `hsl(${hue}, 62%, ${lightness - lightnessShift}%)`,
        simulated: device.kind === 'simulated',
      });
    });
  });
  const tinted = cpus.length > 1;
  cpus.forEach((key, rank) => {
    const hue = CPU_HUES[rank % CPU_HUES.length];
    shades(groups.get(key) ?? [], tinted ? 0 : rank * 6, (device, lightness) => {
      palette.set(device.id, {
        colour: tinted ? `hsl(${hue}, 24%, ${lightness}%)` : `hsl(0, 0%, ${lightness}%)`,
        simulated: device.kind === 'simulated',
      });
    });
  });
  return palette;
}

/** One lightness per device of a physical group, ordered by index: 45% to 72%. */
function shades(
  group: DeviceRecord[],
  offset: number,
  apply: (device: DeviceRecord, lightness: number) => void,
): void {
  const ordered = [...group].sort((a, b) => a.index - b.index || a.id - b.id);
  const step = ordered.length > 1 ? 27 / (ordered.length - 1) : 0;
  ordered.forEach((device, i) => apply(device, Math.min(85, 45 + offset + Math.round(i * step))));
}

/** Stops of the sequential scales (low to high). */
const SCALES = {
  // viridis-like: short ops dark blue, long ops yellow
  time: ['#440154', '#3b528b', '#21918c', '#5ec962', '#fde725'],
  // yellow to dark red: small outputs pale, large ones dark
  memory: ['#ffffcc', '#fed976', '#fd8d3c', '#e31a1c', '#800026'],
};
export type SequentialScale = keyof typeof SCALES;

const LUT_SIZE = 256;
const LUTS: Record<SequentialScale, string[]> = {
  time: buildLut(SCALES.time),
  memory: buildLut(SCALES.memory),
};

function buildLut(stops: string[]): string[] {
  const rgb = stops.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
  return Array.from({ length: LUT_SIZE }, (_, k) => {
    const at = (k / (LUT_SIZE - 1)) * (stops.length - 1);
    const i = Math.min(Math.floor(at), stops.length - 2);
    const f = at - i;
    const [r, g, b] = [0, 1, 2].map((c) => Math.round(rgb[i][c] + (rgb[i + 1][c] - rgb[i][c]) * f));
    return `rgb(${r}, ${g}, ${b})`;
  });
}

/** Colour at `t` in [0, 1] of a sequential scale; NaN gives NO_VALUE_COLOUR. */
export function sequentialColour(t: number, scale: SequentialScale): string {
  if (Number.isNaN(t)) {
    return NO_VALUE_COLOUR;
  }
  const clamped = Math.min(1, Math.max(0, t));
  return LUTS[scale][Math.round(clamped * (LUT_SIZE - 1))];
}

/**
 * A log scale over the positive values given (op times and sizes span orders of magnitude):
 * maps to [0, 1]; values that are NaN or not positive map to NaN.
 */
export function logNormalizer(values: ArrayLike<number>): (value: number) => number {
  let low = Infinity;
  let high = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v > 0) {
      low = Math.min(low, v);
      high = Math.max(high, v);
    }
  }
  if (low === Infinity) {
    return () => NaN;
  }
  const logLow = Math.log(low);
  const span = Math.log(high) - logLow;
  return (value) => (value > 0 ? (span > 0 ? (Math.log(value) - logLow) / span : 1) : NaN);
}

/** Devices of one physical device: the physical one's name and its logical devices. */
export interface PhysicalGroup {
  parent: string;
  devices: DeviceRecord[];
}

/** Devices of one job/task, by physical device. */
export interface LegendGroup {
  /** `/job:<job>/replica:<r>/task:<t>`, or '' for names without one. */
  host: string;
  physical: PhysicalGroup[];
}

/** The task part of a device name: '/job:w/replica:0/task:1/device:GPU:0' -> '/job:w/replica:0/task:1'. */
/** The cluster task a device belongs to: '/job:ps/replica:0/task:0' ('' when unnamed). */
export function hostOf(name: string): string {
  const at = name.indexOf('/device:');
  return at < 0 ? '' : name.slice(0, at);
}

/** Devices grouped for the legend: by job/task, then physical device, each sorted naturally. */
export function legendGroups(devices: readonly DeviceRecord[]): LegendGroup[] {
  const hosts = new Map<string, Map<string, DeviceRecord[]>>();
  for (const device of devices) {
    const host = hostOf(device.name);
    const physical = hosts.get(host) ?? new Map<string, DeviceRecord[]>();
    hosts.set(host, physical);
    const group = physical.get(device.parent) ?? [];
    group.push(device);
    physical.set(device.parent, group);
  }
  const byName = (a: string, b: string) => naturalKey(a).localeCompare(naturalKey(b));
  return [...hosts.keys()].sort(byName).map((host) => {
    const physical = hosts.get(host) ?? new Map<string, DeviceRecord[]>();
    return {
      host,
      physical: [...physical.keys()].sort(byName).map((parent) => ({
        parent,
        devices: [...(physical.get(parent) ?? [])].sort(
          (a, b) => byName(a.name, b.name) || a.id - b.id,
        ),
      })),
    };
  });
}

/** Black or white, whichever reads better on `colour` (hex, rgb() or hsl() as made here). */
export function textColourOn(colour: string): string {
  return lightness(colour) > 0.55 ? '#111111' : '#ffffff';
}

/** Approximate perceived lightness in [0, 1]; unknown formats count as light. */
function lightness(colour: string): number {
  const hsl = /^hsl\(\s*([\d.]+),\s*([\d.]+)%,\s*([\d.]+)%\)$/.exec(colour);
  if (hsl) {
    // A saturated yellow is lighter than a saturated blue of the same HSL lightness.
    const hue = Number(hsl[1]);
    const boost = Number(hsl[2]) > 0 && hue > 30 && hue < 200 ? 0.12 : 0;
    return Number(hsl[3]) / 100 + boost;
  }
  let rgb: number[] | null = null;
  const functional = /^rgb\((\d+),\s*(\d+),\s*(\d+)\)$/.exec(colour);
  if (functional) {
    rgb = functional.slice(1, 4).map(Number);
  } else if (/^#[0-9a-f]{6}$/i.test(colour)) {
    rgb = [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16));
  }
  if (rgb === null) {
    return 1;
  }
  return (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) / 255;
}

/** Hues tried, in order, for transfer edges: the first far from every device's hue wins. */
const TRANSFER_HUES = [320, 0, 170, 55, 95, 240];

/**
 * The colour of transfer edges: a saturated dark hue that no device of the table is drawn in
 * (devices are greys and HUES at 62% saturation, one hue per physical accelerator).
 */
export function transferColour(devices: readonly DeviceRecord[]): string {
  const physical = new Set(devices.filter((d) => !isCpu(d)).map((d) => d.parent));
  const used = HUES.slice(0, Math.min(physical.size, HUES.length));
  const distance = (a: number, b: number) => Math.min(Math.abs(a - b), 360 - Math.abs(a - b));
  const hue = TRANSFER_HUES.find((h) => used.every((u) => distance(h, u) >= 25));
  return hue === undefined ? '#000000' : `hsl(${hue}, 100%, 33%)`;
}
