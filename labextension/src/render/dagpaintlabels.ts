/**
 * The DAG's text in screen space: box names (and, closer in, types or op counts) cut to their box,
 * tags for boxes too small to say their name, container titles and while loops' iteration tabs;
 * each drawn text's rectangle is kept so that no later label covers it.
 */
import { textColourOn } from './colours';
import {
  LABEL_FONT_PX,
  LABEL_INSET_PX,
  LABEL_ROOM_PX,
  MIN_LABEL_FONT_PX,
  NORMAL_FONT_PX,
  OP_HEIGHT,
  TITLE_ROOM_PX,
  TITLE_STRIP,
  TOGGLE_INSET,
  TOGGLE_SIZE,
  labelFontPx,
} from './boxmetrics';
import { iterationsText, loopText } from './controlflow';
import type { DagModel } from './dagmodel';
import { fitLabel, fitLabels, overlaps, type LabelRect } from './labels';
import { visibleText } from './visible';
import type { PaintRequest } from './dagpaint';
import { OUTLINE_SCALE, roundedRect } from './dagshapes';

/** A tag's text keeps this far from its sides, and has at least this much room (CSS px). */
const TAG_PAD_PX = 3;
const TAG_ROOM_PX = 40;
/** Unnamed boxes' names a paint reports at most. */
const UNNAMED_LISTED = 5;
const TYPE_LINE_SCALE = 1.3;
const COUNT_LINE_SCALE = 0.65;

/** "3 ops", "×100 · 3,000 ops": the second line of a folded group. */
function groupLine(model: DagModel, box: number): string {
  const record = model.folded.boxes[box];
  const series = model.hierarchy.groups[record.group].series;
  const ops = `${record.ops.toLocaleString('en-US')} op${record.ops === 1 ? '' : 's'}`;
  return series > 0 ? `×${series} · ${ops}` : ops;
}

/**
 * Names (and, closer in, types or op counts) in screen space, in each box with room for them on
 * screen, cut in the middle to their box keeping what tells them apart (labels.fitLabels); each
 * drawn line's rectangle goes into `placed`. The font follows the zoom (boxmetrics.labelFontPx):
 * LABEL_FONT_PX at READABLE_SCALE, the inspector's own font on a graph drawn closer (a small
 * one), and smaller and cut shorter rather than not at all on a graph fitted below
 * READABLE_SCALE (a narrow canvas). Returns how many boxes say their name.
 */
export function drawLabels(
  request: PaintRequest,
  visible: Int32Array,
  placed: LabelRect[],
  unnamed: string[],
): number {
  const { ctx, model, nodes, viewport, colours } = request;
  const { scale } = viewport;
  const { x, y, w, h } = model.layout.boxes;
  // The op boxes' font (the shortest boxes) caps every box's, so a folded group says its name
  // no bigger than the ops beside it; below LABEL_FONT_PX the taller groups keep that.
  const most = Math.max(
    LABEL_FONT_PX,
    labelFontPx(OP_HEIGHT * scale, LABEL_ROOM_PX, request.fontPx ?? NORMAL_FONT_PX),
  );
  const fontOf = (b: number) => labelFontPx(h[b] * scale, LABEL_ROOM_PX, most);
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  const roomOf = (b: number) => {
    const group = model.folded.boxes[b].node < 0;
    return (w[b] - (group ? TOGGLE_SIZE + TOGGLE_INSET : 0)) * scale - 2 * LABEL_INSET_PX;
  };
  const named = Array.from(visible).filter((b) => fontOf(b) > 0 && roomOf(b) > 0);
  const fonts = named.map(fontOf);
  // Text is as wide as its font is big: each box's room in px of LABEL_FONT_PX text, so every
  // label is fitted (and kept apart from the others) with one measure.
  const rooms = named.map((b, k) => (roomOf(b) * LABEL_FONT_PX) / fonts[k]);
  const names = fitLabels(
    ctx,
    named.map((b) => visibleText(model.labels[b])),
    rooms,
    named.map((b) => model.labelKeeps[b]),
  );
  const seconds = named.map((b, k) => {
    const box = model.folded.boxes[b];
    const second =
      box.node < 0
        ? scale >= COUNT_LINE_SCALE && groupLine(model, b)
        : scale >= TYPE_LINE_SCALE && nodes[box.node].type;
    return second ? fitLabel(ctx, visibleText(second), rooms[k]) : '';
  });
  const textColours = colours.palette.map(textColourOn);
  let font = LABEL_FONT_PX;
  const line = (text: string, sx: number, cy: number) => {
    ctx.fillText(text, sx, cy);
    const width = ctx.measureText(text).width;
    placed.push({ x: sx, y: cy - font / 2, w: width, h: font });
  };
  let drawn = 0;
  named.forEach((b, k) => {
    if (names[k] === '') {
      return;
    }
    drawn++;
    if (fonts[k] !== font) {
      font = fonts[k];
      ctx.font = `${font}px sans-serif`;
    }
    const group = model.folded.boxes[b].node < 0;
    const sx = x[b] * scale + viewport.offsetX + LABEL_INSET_PX;
    const sy = y[b] * scale + viewport.offsetY;
    const height = h[b] * scale;
    // A faint box of a branch not taken: its fill barely shows, so its name is dark on white.
    ctx.fillStyle =
      request.flow?.notRun[b] === 1 ? request.theme.muted : textColours[colours.index[b]];
    // Two lines a font apart around the middle (above a group's device bar), where they fit.
    const middle = sy + height * (group ? 0.4 : 0.5);
    const room = group ? height * 0.8 : height;
    if (seconds[k] === '' || room < 2 * font + 4) {
      line(names[k], sx, middle);
      return;
    }
    line(names[k], sx, middle - font / 2 - 1);
    line(seconds[k], sx, middle + font / 2 + 1);
  });
  const said = new Set(named.filter((_, k) => names[k] !== ''));
  const small = Array.from(visible).filter((b) => !said.has(b));
  drawn += scale >= OUTLINE_SCALE ? drawTags(request, small, placed) : 0;
  for (const b of small) {
    if (!placed.some((r) => r.box === b) && unnamed.length < UNNAMED_LISTED) {
      unnamed.push(model.labels[b]);
    }
  }
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
  return drawn;
}

/**
 * The names of `boxes`, too small on screen to hold them (an op box beside the folded groups of a
 * graph fitted to a narrow canvas is a few px tall), each on a tag in its box's colour centred on
 * it, MIN_LABEL_FONT_PX text cut to at least TAG_ROOM_PX, where the tag covers no other label;
 * how many are drawn. Their rectangles go into `placed`, with their box.
 */
function drawTags(request: PaintRequest, boxes: readonly number[], placed: LabelRect[]): number {
  const { ctx, model, viewport, colours, theme } = request;
  const { scale, offsetX, offsetY } = viewport;
  const { x, y, w, h } = model.layout.boxes;
  const font = MIN_LABEL_FONT_PX;
  let drawn = 0;
  for (const b of boxes) {
    ctx.font = `${LABEL_FONT_PX}px sans-serif`;
    const room = Math.max(w[b] * scale - 2 * TAG_PAD_PX, TAG_ROOM_PX);
    const text = fitLabel(
      ctx,
      visibleText(model.labels[b]),
      (room * LABEL_FONT_PX) / font,
      model.labelKeeps[b],
    );
    if (text === '') {
      continue;
    }
    ctx.font = `${font}px sans-serif`;
    const width = ctx.measureText(text).width + 2 * TAG_PAD_PX;
    const height = font + 4;
    const cx = (x[b] + w[b] / 2) * scale + offsetX;
    const cy = (y[b] + h[b] / 2) * scale + offsetY;
    const tag: LabelRect = { x: cx - width / 2, y: cy - height / 2, w: width, h: height, box: b };
    if (placed.some((r) => overlaps(r, tag))) {
      continue;
    }
    const colour = colours.palette[colours.index[b]];
    ctx.beginPath();
    roundedRect(ctx, tag.x, tag.y, tag.w, tag.h, 3);
    ctx.fillStyle = colour;
    ctx.fill();
    ctx.strokeStyle = theme.foreground;
    ctx.lineWidth = 1;
    ctx.stroke();
    ctx.fillStyle = textColourOn(colour);
    ctx.textAlign = 'center';
    ctx.fillText(text, cx, cy);
    ctx.textAlign = 'left';
    placed.push(tag);
    drawn++;
  }
  return drawn;
}

/**
 * Each visible container's title in its top strip, where the strip has room for it: in a smaller
 * font on a strip too short for LABEL_FONT_PX (boxmetrics.labelFontPx), as box names are.
 */
export function drawTitles(
  { ctx, model, viewport, theme, fontPx, flow }: PaintRequest,
  placed: LabelRect[],
): void {
  const { scale } = viewport;
  const font = labelFontPx(TITLE_STRIP * scale, TITLE_ROOM_PX, fontPx ?? NORMAL_FONT_PX);
  if (font === 0) {
    return;
  }
  const { x, y, w } = model.layout.containers;
  // Fitted in LABEL_FONT_PX text, as the box names are, and drawn in `font`.
  ctx.font = `600 ${LABEL_FONT_PX}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  ctx.fillStyle = theme.foreground;
  const fitted: [string, number, number][] = [];
  for (let c = 0; c < x.length; c++) {
    const sx = x[c] * scale + viewport.offsetX + 8;
    const cy = (y[c] + TITLE_STRIP / 2) * scale + viewport.offsetY;
    if (sx > viewport.width || cy < 0 || cy > viewport.height) {
      continue;
    }
    const group = model.hierarchy.groups[model.folded.containers[c].group];
    const loop = flow?.loopContainers[c] ?? null;
    // A loop's title says its iterations in the run shown: `rnn/while · 50 iterations`.
    const suffix =
      loop !== null ? ` · ${iterationsText(loop)}` : group.series > 0 ? ` ×${group.series}` : '';
    const room = (((w[c] - TOGGLE_SIZE - 2 * TOGGLE_INSET) * scale - 12) * LABEL_FONT_PX) / font;
    // The name cut in the middle (keeping what tells it apart), the series count whole.
    const name = fitLabel(
      ctx,
      visibleText(model.titles[c]),
      room - ctx.measureText(suffix).width,
      model.titleKeeps[c],
    );
    if (name !== '') {
      fitted.push([`${name}${suffix}`, sx, cy]);
    }
  }
  ctx.font = `600 ${font}px sans-serif`;
  for (const [text, sx, cy] of fitted) {
    ctx.fillText(text, sx, cy);
    const width = ctx.measureText(text).width;
    placed.push({ x: sx, y: cy - font / 2, w: width, h: font });
  }
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
}

/**
 * A folded while loop's iterations in the run shown (`while · 50 iterations`) on a tab in the
 * loop's colour standing on its box's top edge, at every zoom; left out where it would cover
 * another label.
 */
export function drawLoopTabs(
  { ctx, model, viewport, theme, flow }: PaintRequest,
  visible: Int32Array,
  placed: LabelRect[],
): void {
  if (!flow) {
    return;
  }
  const { scale } = viewport;
  const { x, y, w } = model.layout.boxes;
  const font = Math.max(MIN_LABEL_FONT_PX, Math.min(LABEL_FONT_PX, Math.round(22 * scale)));
  ctx.font = `600 ${font}px sans-serif`;
  ctx.textAlign = 'left';
  ctx.textBaseline = 'middle';
  for (const b of visible) {
    const loop = flow.loopBoxes[b];
    if (loop === null) {
      continue;
    }
    const text = loopText(loop);
    const width = ctx.measureText(text).width + 8;
    const height = font + 4;
    const sx = x[b] * scale + viewport.offsetX + Math.max(0, (w[b] * scale - width) / 2);
    const sy = y[b] * scale + viewport.offsetY - height - 1; // on the box, above its name
    const tab = { x: sx, y: sy, w: width, h: height };
    if (placed.some((other) => overlaps(tab, other))) {
      continue;
    }
    ctx.beginPath();
    roundedRect(ctx, sx, sy, width, height, height / 2);
    ctx.fillStyle = theme.loop;
    ctx.fill();
    ctx.fillStyle = textColourOn(theme.loop);
    ctx.fillText(text, sx + 4, sy + height / 2);
    placed.push(tab);
  }
  ctx.font = `${LABEL_FONT_PX}px sans-serif`;
}
