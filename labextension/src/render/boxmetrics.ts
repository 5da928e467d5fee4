/**
 * The DAG's box sizes (world px) and label metrics (CSS px on screen: labels keep their size at
 * every zoom), shared by the layout (compound.ts), the folding (dagfold.ts) and the paint.
 */

/** The widest op box; an op box is as wide as its label needs at READABLE_SCALE (opBoxWidth). */
export const OP_WIDTH = 170;
export const OP_HEIGHT = 28;
export const GROUP_WIDTH = 170;
export const GROUP_HEIGHT = 48;
/** A container's inner margin, and the strip at its top that holds its name. */
export const CONTAINER_PAD = 10;
export const CONTAINER_HEADER = 28;

export const LABEL_FONT_PX = 11;
/** An average character of the label font, for sizing boxes before any canvas measures text. */
const LABEL_CHAR_PX = 6.5;
/**
 * A box or container title says its name wherever it is this tall on screen (CSS px) and has
 * this much width for text (about six characters): the font stays LABEL_FONT_PX at every zoom.
 */
export const LABEL_ROOM_PX = LABEL_FONT_PX + 2;
/** A container's title is drawn where its strip is as tall as the font (it has no border). */
export const TITLE_ROOM_PX = LABEL_FONT_PX;
export const LABEL_MIN_WIDTH_PX = 36;
/** A box's text starts this far in from its left side and keeps as far from its right side. */
export const LABEL_INSET_PX = 5;
/** A container's title strip, in world px (its bottom line sits 4 px above the header's end). */
export const TITLE_STRIP = CONTAINER_HEADER - 4;
/**
 * The zoom from which every op box and container title has room for its name (folded groups are
 * bigger): the default folding keeps the fitted zoom at least this (dagfold.ts).
 */
export const READABLE_SCALE = Math.max(
  LABEL_ROOM_PX / OP_HEIGHT,
  TITLE_ROOM_PX / TITLE_STRIP,
  (LABEL_MIN_WIDTH_PX + 2 * LABEL_INSET_PX) / OP_WIDTH,
);

/**
 * An op box wide enough to show `label` whole at READABLE_SCALE, and never narrower than one that
 * shows about six characters there (nor wider than OP_WIDTH: longer names are cut in the middle).
 * Short names make narrow boxes, so eight towers' `Const_N` fit a notebook cell named.
 */
export function opBoxWidth(label: string): number {
  const text = (LABEL_INSET_PX * 2 + label.length * LABEL_CHAR_PX) / READABLE_SCALE;
  const least = (LABEL_MIN_WIDTH_PX + 2 * LABEL_INSET_PX) / READABLE_SCALE;
  return Math.min(OP_WIDTH, Math.max(least, Math.ceil(text)));
}
