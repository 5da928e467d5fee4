/**
 * Painting the DAG's shapes in world space: containers with their +/- control, boxes filled by
 * colour (one fill per colour and opacity), their outlines and marks, folded groups' device bars,
 * marked boxes' rings and tabs, and the selection and hover rings.
 */
import { CONTAINER_HEADER } from './boxmetrics';
import { LIVE_RUNNING, boxAlpha, type BoxColours } from './dagcolour';
import { mark, type MarkId } from './dagmarks';
import type { LabelRect } from './labels';
import type { PaintRequest, DagTheme } from './dagpaint';
import { CORNER_RADIUS, OUTLINE_SCALE, roundedRect, toggleRect, worldView } from './dagshapes';

const DEVICE_BAR = 5;
/** The red corner of an op that failed or did not land where it asked. */
const OP_CORNER = 14;

/** A +/- sign in a small square: '+' opens a folded group, '-' folds an opened one. */
function drawToggle(
  ctx: CanvasRenderingContext2D,
  rect: LabelRect,
  open: boolean,
  theme: DagTheme,
  px: number,
): void {
  ctx.beginPath();
  ctx.rect(rect.x, rect.y, rect.w, rect.h);
  ctx.fillStyle = theme.background;
  ctx.fill();
  ctx.strokeStyle = theme.foreground;
  ctx.lineWidth = Math.max(1, px);
  ctx.stroke();
  ctx.beginPath();
  const cx = rect.x + rect.w / 2;
  const cy = rect.y + rect.h / 2;
  const arm = rect.w * 0.3;
  ctx.moveTo(cx - arm, cy);
  ctx.lineTo(cx + arm, cy);
  if (!open) {
    ctx.moveTo(cx, cy - arm);
    ctx.lineTo(cx, cy + arm);
  }
  ctx.lineWidth = Math.max(1.6, 1.6 * px);
  ctx.stroke();
}

export function drawContainers({ ctx, model, viewport, theme, flow }: PaintRequest): void {
  const { x, y, w, h } = model.layout.containers;
  const px = 1 / viewport.scale;
  const [x0, y0, x1, y1] = worldView(viewport);
  for (let c = 0; c < x.length; c++) {
    if (x[c] > x1 || y[c] > y1 || x[c] + w[c] < x0 || y[c] + h[c] < y0) {
      continue;
    }
    ctx.beginPath();
    roundedRect(ctx, x[c], y[c], w[c], h[c], CORNER_RADIUS * 1.5);
    ctx.fillStyle = theme.container;
    ctx.fill();
    // A while loop's scope opened: its body inside an outline of the loop's own mark.
    const outline = mark(flow?.loopContainers[c] ? 'loop' : 'opened');
    ctx.strokeStyle = theme[outline.colour];
    ctx.lineWidth = outline.stroke.width * px;
    ctx.stroke();
    ctx.strokeStyle = theme[mark('opened').colour];
    ctx.beginPath();
    ctx.moveTo(x[c], y[c] + CONTAINER_HEADER - 4);
    ctx.lineTo(x[c] + w[c], y[c] + CONTAINER_HEADER - 4);
    ctx.lineWidth = px;
    ctx.stroke();
    if (viewport.scale >= OUTLINE_SCALE) {
      drawToggle(ctx, toggleRect(x[c], y[c], w[c]), true, theme, px);
    }
  }
}

export function drawBoxes(request: PaintRequest, visible: Int32Array): void {
  const { ctx, model, colours, dimmed, live, alerts, viewport, theme } = request;
  const flow = request.flow ?? null;
  const { x, y, w, h } = model.layout.boxes;
  const px = 1 / viewport.scale;
  const isGroup = (b: number) => model.folded.boxes[b].node < 0;
  const shape = (b: number) => {
    if (isGroup(b)) {
      roundedRect(ctx, x[b], y[b], w[b], h[b], CORNER_RADIUS);
    } else {
      ctx.rect(x[b], y[b], w[b], h[b]);
    }
  };
  // A series is drawn as a stack: two offset outlines behind its box.
  ctx.beginPath();
  for (const b of visible) {
    const group = model.folded.boxes[b].group;
    if (group >= 0 && model.hierarchy.groups[group].series > 0) {
      roundedRect(ctx, x[b] + 6, y[b] - 6, w[b], h[b], CORNER_RADIUS);
      roundedRect(ctx, x[b] + 3, y[b] - 3, w[b], h[b], CORNER_RADIUS);
    }
  }
  ctx.fillStyle = theme.background;
  ctx.fill();
  ctx.strokeStyle = theme[mark('series').colour];
  ctx.lineWidth = mark('series').stroke.width * px;
  ctx.stroke();
  const byColour = groupByColour(visible, colours);
  // One pass per opacity (a few at most): boxes filtered out, waiting in the run in flight, the rest.
  const alphaOf = (b: number) => boxAlpha(dimmed?.[b] ?? 0, live?.[b] ?? 0, flow?.notRun[b] ?? 0);
  const passes = new Set<number>();
  for (const b of visible) {
    passes.add(alphaOf(b));
  }
  for (const pass of passes) {
    ctx.globalAlpha = pass;
    byColour.forEach((boxes, colour) => {
      ctx.beginPath();
      for (const b of boxes) {
        if (alphaOf(b) === pass) {
          shape(b);
        }
      }
      ctx.fillStyle = colours.palette[colour];
      ctx.fill();
    });
  }
  ctx.globalAlpha = 1;
  const outline = (pick: (b: number) => boolean, id: MarkId) => {
    const { colour, stroke } = mark(id);
    ctx.beginPath();
    for (const b of visible) {
      if (pick(b)) {
        shape(b);
      }
    }
    ctx.strokeStyle = theme[colour];
    ctx.lineWidth = stroke.width * px;
    ctx.setLineDash(stroke.dash.map((d) => d * px));
    ctx.stroke();
  };
  if (viewport.scale >= OUTLINE_SCALE) {
    // A plain op's thin outline (a frame, not a mark: the key has no entry for it).
    ctx.beginPath();
    for (const b of visible) {
      if (!isGroup(b) && !model.simulated[b]) {
        shape(b);
      }
    }
    ctx.strokeStyle = theme.muted;
    ctx.lineWidth = px;
    ctx.setLineDash([]);
    ctx.stroke();
    outline((b) => !isGroup(b) && model.simulated[b] === 1, 'simulated');
    drawDeviceBars(request, visible);
  }
  // Folded groups get a heavy outline; requests the placer did not honour (red outline and
  // corner) and failed or unplaced ops (red, heavier) stay visible at every zoom.
  outline(isGroup, 'folded');
  if (flow !== null) {
    outline((b) => flow.loopBoxes[b] !== null, 'loop');
    outline((b) => flow.notRun[b] === 1, 'not-run');
  }
  outline((b) => model.mismatch[b] === 1, 'mismatch');
  if (alerts !== null) {
    outline((b) => alerts[b] === 1, 'failed');
  }
  ctx.beginPath();
  const corner = Math.min(OP_CORNER, Math.max(8, 6 * px));
  for (const b of visible) {
    if (model.mismatch[b] === 1 || alerts?.[b] === 1) {
      ctx.moveTo(x[b] + w[b] - corner, y[b]);
      ctx.lineTo(x[b] + w[b], y[b]);
      ctx.lineTo(x[b] + w[b], y[b] + corner);
      ctx.closePath();
    }
  }
  ctx.fillStyle = theme.mismatch;
  ctx.fill();
  if (viewport.scale >= OUTLINE_SCALE) {
    for (const b of visible) {
      if (isGroup(b)) {
        drawToggle(ctx, toggleRect(x[b], y[b], w[b]), false, theme, px);
      }
    }
  }
  if (live !== null) {
    // Ops running now in the run in flight: a heavy outline at every zoom.
    outline((b) => live[b] === LIVE_RUNNING, 'running');
  }
}

/** Inside each folded group, a bar split in proportion to its ops on each device. */
function drawDeviceBars({ ctx, model, deviceColour }: PaintRequest, visible: Int32Array): void {
  const { x, y, w, h } = model.layout.boxes;
  ctx.setLineDash([]);
  for (const b of visible) {
    const shares = model.deviceShares[b];
    if (shares === null) {
      continue;
    }
    const total = model.folded.boxes[b].ops;
    const left = x[b] + CORNER_RADIUS;
    const width = w[b] - 2 * CORNER_RADIUS;
    let at = left;
    const top = y[b] + h[b] - DEVICE_BAR - 4;
    // A light frame, so a bar in the box's own colour still shows.
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(left - 1.5, top - 1.5, width + 3, DEVICE_BAR + 3);
    for (const [device, count] of shares) {
      const part = (width * count) / total;
      ctx.fillStyle = deviceColour(device);
      ctx.fillRect(at, top, part, DEVICE_BAR);
      at += part;
    }
  }
}

/** Visible boxes bucketed by palette index, so each fill style is set once. */
function groupByColour(visible: Int32Array, colours: BoxColours): Map<number, Int32Array> {
  const counts = new Map<number, number>();
  for (const b of visible) {
    counts.set(colours.index[b], (counts.get(colours.index[b]) ?? 0) + 1);
  }
  const groups = new Map<number, Int32Array>();
  const fill = new Map<number, number>();
  counts.forEach((count, colour) => {
    groups.set(colour, new Int32Array(count));
    fill.set(colour, 0);
  });
  for (const b of visible) {
    const colour = colours.index[b];
    const at = fill.get(colour) ?? 0;
    (groups.get(colour) as Int32Array)[at] = b;
    fill.set(colour, at + 1);
  }
  return groups;
}

/** Gap (CSS px) between a marked box and its ring: outside the selection and hover rings. */
const MARK_GAP = 6;
/** Side of the mark's corner tab (CSS px, at least; world px closer in). */
const MARK_TAB = 9;

/**
 * Marked boxes (a comparison's moved ops): a ring outside the box, clear of its device fill and
 * of the selection ring, and a filled tab at its top-left corner (the red corner is top-right),
 * at every zoom.
 */
export function drawMarks(
  { ctx, model, viewport, marked, theme }: PaintRequest,
  visible: Int32Array,
): void {
  if (!marked) {
    return;
  }
  const px = 1 / viewport.scale;
  const { x, y, w, h } = model.layout.boxes;
  const gap = MARK_GAP * px;
  const tab = Math.max(MARK_TAB * px, MARK_TAB);
  ctx.setLineDash([]);
  ctx.beginPath();
  for (const b of visible) {
    if (marked[b] === 1) {
      ctx.rect(x[b] - gap, y[b] - gap, w[b] + 2 * gap, h[b] + 2 * gap);
    }
  }
  ctx.strokeStyle = theme[mark('marked').colour];
  ctx.lineWidth = mark('marked').stroke.width * px;
  ctx.stroke();
  ctx.beginPath();
  for (const b of visible) {
    if (marked[b] === 1) {
      ctx.moveTo(x[b] - gap, y[b] - gap);
      ctx.lineTo(x[b] - gap + tab, y[b] - gap);
      ctx.lineTo(x[b] - gap, y[b] - gap + tab);
      ctx.closePath();
    }
  }
  ctx.fillStyle = theme.marked;
  ctx.fill();
}

export function drawRings({
  ctx,
  model,
  viewport,
  hoveredBox,
  selectedBox,
  theme,
}: PaintRequest): void {
  const px = 1 / viewport.scale;
  const { x, y, w, h } = model.layout.boxes;
  const ring = (box: number, colour: string, width: number) => {
    if (box < 0) {
      return;
    }
    const gap = 3 * px;
    ctx.strokeStyle = colour;
    ctx.lineWidth = width * px;
    ctx.strokeRect(x[box] - gap, y[box] - gap, w[box] + 2 * gap, h[box] + 2 * gap);
  };
  ring(selectedBox, theme.foreground, 3);
  ring(hoveredBox, theme.accent, 2);
}
