/** The lines of the DAG's hover tooltip, as plain strings (the view sets them as text). */
import type { DagModel } from './dagmodel';
import { formatBytes, formatNs } from './format';
import { displayPath } from './labels';
import { formatShapes } from './opformat';
import { MIXED } from './scopes';
import type { PlacementStore } from './store';

export function tooltipLines(store: PlacementStore, model: DagModel, box: number): string[] {
  const record = model.folded.boxes[box];
  const deviceName = (id: number | null) =>
    id === null ? 'not placed' : (store.deviceById(id)?.name ?? `device ${id}`);
  if (record.node < 0) {
    const device = record.device === MIXED ? 'several devices' : deviceName(record.device);
    const group = model.hierarchy.groups[record.group];
    const what = group.series > 0 ? `series of ${group.series} scopes alike` : 'scope';
    const lines = [`${displayPath(record.name)}/`, `${what}: ${record.ops} ops on ${device}`];
    if (group.side) {
      lines.push('set aside: mirrors the forward graph');
    }
    lines.push('+ or double-click to open');
    return lines;
  }
  const node = store.nodes[record.node];
  const spans = store.opSpans();
  const ran = !Number.isNaN(spans.t0[record.node]);
  const lines = [
    node.name,
    `${node.type}${node.dtype ? ` · ${node.dtype}` : ''} · ${formatShapes(node.shapes)}`,
  ];
  if (node.requested) {
    lines.push(`requested: ${node.requested}`);
  }
  lines.push(`assigned: ${deviceName(node.device)}`);
  lines.push(
    ran
      ? `time: ${formatNs(spans.t1[record.node] - spans.t0[record.node])}${
          spans.failed[record.node] ? ' (failed)' : ''
        }`
      : 'time: has not run',
  );
  lines.push(`memory: ${formatBytes(node.bytes_out)}`);
  return lines;
}

/** The tooltip of an opened group's title: its whole name, which the title may cut. */
export function containerLines(model: DagModel, container: number): string[] {
  const group = model.hierarchy.groups[model.folded.containers[container].group];
  const ops = group.end - group.first;
  const what = group.series > 0 ? `series of ${group.series}` : 'scope';
  return [`${displayPath(group.key)}/`, `${what}: ${ops} ops, opened`, '− or double-click to fold'];
}
