/**
 * The device colour the panels use: A1's palette (colours.ts), memoised per device table so a
 * panel with many traces computes it once.
 */
import { devicePalette, type DeviceStyle } from './colours';
import type { DeviceRecord } from './types';

let cachedDevices: readonly DeviceRecord[] | null = null;
let cachedPalette: Map<number, DeviceStyle> = new Map();

/** Events on a device the table lacks (or none): a mid grey, visible on light and dark. */
const UNKNOWN_DEVICE = '#9e9e9e';

export function panelDeviceColour(devices: readonly DeviceRecord[], deviceId: number): string {
  if (devices !== cachedDevices) {
    cachedDevices = devices;
    cachedPalette = devicePalette(devices);
  }
  return cachedPalette.get(deviceId)?.colour ?? UNKNOWN_DEVICE;
}
