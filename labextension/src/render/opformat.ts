/** How an op's own fields read in the tooltip and the details pane. */
import type { NodeRecord } from './types';

/** Output shapes as TensorFlow prints them: (2, ?, 3); unknown rank as <unknown>. */
export function formatShapes(shapes: NodeRecord['shapes']): string {
  if (shapes.length === 0) {
    return 'no outputs';
  }
  return shapes
    .map((shape) =>
      shape === null
        ? '<unknown>'
        : `(${shape.map((d) => (d === null ? '?' : String(d))).join(', ')})`,
    )
    .join(', ');
}
