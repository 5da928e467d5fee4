/**
 * How tall the DAG's canvas is: as tall as the graph fitted to its room needs, never taller
 * than the room (--placeviz-dag-room, the height the page gives the graph) nor shorter than
 * MIN_CANVAS_HEIGHT. A 3-op graph takes a strip of the page at its readable size instead of
 * floating in the middle of an empty canvas; a big graph fills the room, as it always did.
 */
import type { CanvasSize } from './dagfold';
import { FIT_MARGIN, fitScale } from './viewport';

/** The CSS variable that gives the canvas's room (its largest height), in px. */
export const ROOM_VARIABLE = '--placeviz-dag-room';
/** The shortest canvas, CSS px: room for a row of boxes and a hover tooltip's first lines. */
export const MIN_CANVAS_HEIGHT = 120;

/** The canvas height (CSS px) that shows a `width` x `height` world fitted to `room` whole. */
export function canvasHeightFor(
  world: { width: number; height: number },
  room: CanvasSize,
): number {
  const scale = fitScale(room, world.width, world.height);
  const needed = Math.ceil(world.height * scale + 2 * FIT_MARGIN);
  return Math.min(room.height, Math.max(MIN_CANVAS_HEIGHT, needed));
}

/** The room's height from `style` (ROOM_VARIABLE), or null where the page sets none. */
export function roomHeight(style: CSSStyleDeclaration | undefined): number | null {
  const value = Number.parseFloat(style?.getPropertyValue(ROOM_VARIABLE) ?? '');
  return Number.isFinite(value) && value > 0 ? value : null;
}
