/** How sizes, times and device names read in panels, tooltips and the details pane. */

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(bytes: number | null): string {
  if (bytes === null || !Number.isFinite(bytes)) {
    return 'unknown';
  }
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${BYTE_UNITS[unit]}`;
}

/** A time or duration in nanoseconds, in the unit that keeps it readable. */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) {
    return 'n/a';
  }
  const abs = Math.abs(ns);
  if (abs < 1e3) {
    return `${Math.round(ns)} ns`;
  }
  if (abs < 1e6) {
    return `${(ns / 1e3).toFixed(1)} µs`;
  }
  if (abs < 1e9) {
    return `${(ns / 1e6).toFixed(2)} ms`;
  }
  return `${(ns / 1e9).toFixed(3)} s`;
}

/**
 * The part of a full device name a label has room for: `GPU:0` for a local device, with the job
 * and task in front when they are not the default (`worker/1 GPU:0`).
 */
export function shortDeviceName(name: string): string {
  const match = /^\/job:([^/]+)\/replica:\d+\/task:(\d+)\/device:(.+)$/.exec(name);
  if (match === null) {
    return name;
  }
  const [, job, task, device] = match;
  return job === 'localhost' && task === '0' ? device : `${job}/${task} ${device}`;
}
