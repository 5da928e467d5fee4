/**
 * The DAG's box sizes (world px) and label metrics (CSS px on screen: labels keep their size at
 * every zoom), shared by the layout (compound.ts), the folding (dagfold.ts) and the paint.
 */

/**
 * The widest box: a box is as wide as its shortest telling label (labels.shortestLabel:
 * `tower_0/…/MatMul_grad`) needs at READABLE_SCALE (opBoxWidth, groupBoxWidth), up to this.
 */
export const OP_WIDTH = 320;
export const OP_HEIGHT = 28;
/** The narrowest folded group: room for its op count, its +/- and its device bar. */
export const GROUP_WIDTH = 170;
export const GROUP_HEIGHT = 48;
/** A container's inner margin, and the strip at its top that holds its name. */
export const CONTAINER_PAD = 10;
export const CONTAINER_HEADER = 28;

/** The font of labels at READABLE_SCALE, CSS px: what a graph fitted to be readable says. */
export const LABEL_FONT_PX = 11;
/**
 * The largest label font, CSS px (the inspector's own font, --placeviz-font-size): a box drawn
 * tall enough (a small graph, or a zoom closer than READABLE_SCALE) says its name in it.
 */
export const NORMAL_FONT_PX = 13;
/** An average character of the label font, for sizing boxes before any canvas measures text. */
const LABEL_CHAR_PX = 6.5;
/**
 * A box says its name in LABEL_FONT_PX wherever it is this tall on screen (CSS px), and a
 * container its title where its strip is TITLE_ROOM_PX tall (it has no border); the views the
 * folding picks (dagfold.ts) also give every op box LABEL_MIN_WIDTH_PX for text (about six
 * characters). Where a graph cannot fit its canvas at READABLE_SCALE (a narrow canvas: a
 * comparison's half page), names get smaller and shorter rather than none (labelFontPx,
 * labels.fitLabel).
 */
export const LABEL_ROOM_PX = LABEL_FONT_PX + 2;
export const TITLE_ROOM_PX = LABEL_FONT_PX;
export const LABEL_MIN_WIDTH_PX = 36;
/** The smallest font a name or title is drawn in, CSS px: below it, a box says nothing. */
export const MIN_LABEL_FONT_PX = 9;
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

/** World px of a box's text `label` (and its insets) at READABLE_SCALE. */
function textWidth(label: string): number {
  return Math.ceil((LABEL_INSET_PX * 2 + label.length * LABEL_CHAR_PX) / READABLE_SCALE);
}

/**
 * An op box wide enough to show `label` whole at READABLE_SCALE, and never narrower than one that
 * shows about six characters there (nor wider than OP_WIDTH: longer names are cut in the middle).
 * Short names make narrow boxes, so eight towers' `Const_N` fit a notebook cell named.
 */
export function opBoxWidth(label: string): number {
  const least = (LABEL_MIN_WIDTH_PX + 2 * LABEL_INSET_PX) / READABLE_SCALE;
  return Math.min(OP_WIDTH, Math.max(least, textWidth(label)));
}

/** The +/- control of a folded group (world px) and its inset from the box's corner. */
export const TOGGLE_SIZE = 16;
export const TOGGLE_INSET = 4;

/**
 * A folded group's box: GROUP_WIDTH, or as wide as shows `label` whole beside its +/- at
 * READABLE_SCALE, up to OP_WIDTH (`GradientDescent`, `tower_0/…/MatMul_grad`).
 */
export function groupBoxWidth(label: string): number {
  return Math.min(OP_WIDTH, Math.max(GROUP_WIDTH, textWidth(label) + TOGGLE_SIZE + TOGGLE_INSET));
}

/**
 * The font (CSS px) of the text in a box or title strip `heightPx` tall on screen that needs
 * `room` px of height for LABEL_FONT_PX (LABEL_ROOM_PX for a box, TITLE_ROOM_PX for a strip):
 * as big as keeps those margins, up to `most` (the inspector's font: NORMAL_FONT_PX) and down to
 * MIN_LABEL_FONT_PX; 0 where not even that fits. LABEL_FONT_PX at READABLE_SCALE.
 */
export function labelFontPx(
  heightPx: number,
  room: number = LABEL_ROOM_PX,
  most: number = NORMAL_FONT_PX,
): number {
  const font = Math.min(most, Math.floor(heightPx - (room - LABEL_FONT_PX)));
  return font >= MIN_LABEL_FONT_PX ? font : 0;
}
