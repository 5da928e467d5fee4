/**
 * The filter and search text: it matches an op by name, type or device, case-insensitively. A text
 * that is exactly a device's full name (a legend click) matches that device only, so GPU:1 does
 * not also match GPU:10.
 */
import type { PlacementStore } from './store';

/** Whether the op at each node index matches `text`; null when the text is empty (no filter). */
export function matchOps(store: PlacementStore, text: string): Uint8Array | null {
  const needle = text.trim().toLowerCase();
  if (needle === '') {
    return null;
  }
  const matches = new Uint8Array(store.nodes.length);
  const exactDevice = store.devices.find((d) => d.name.toLowerCase() === needle);
  if (exactDevice !== undefined) {
    store.nodes.forEach((node, i) => {
      matches[i] = node.device === exactDevice.id ? 1 : 0;
    });
    return matches;
  }
  const deviceMatches = new Set(
    store.devices.filter((d) => d.name.toLowerCase().includes(needle)).map((d) => d.id),
  );
  store.nodes.forEach((node, i) => {
    const hit =
      node.name.toLowerCase().includes(needle) ||
      node.type.toLowerCase().includes(needle) ||
      (node.device !== null && deviceMatches.has(node.device));
    matches[i] = hit ? 1 : 0;
  });
  return matches;
}

/**
 * The id of the op named exactly `text`, else the first whose name, else type, else device
 * matches it; null if none. (`grad_ys_0` finds that op, not `grad_ys_0/Const` made before it.)
 */
export function findOp(store: PlacementStore, text: string): number | null {
  const needle = text.trim().toLowerCase();
  if (needle === '') {
    return null;
  }
  const byName =
    store.nodes.find((n) => n.name.toLowerCase() === needle) ??
    store.nodes.find((n) => n.name.toLowerCase().includes(needle));
  const byType = byName ?? store.nodes.find((n) => n.type.toLowerCase().includes(needle));
  const found =
    byType ??
    store.nodes.find(
      (n) =>
        n.device !== null &&
        (store.deviceById(n.device)?.name ?? '').toLowerCase().includes(needle),
    );
  return found === undefined ? null : found.id;
}
