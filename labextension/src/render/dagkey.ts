/**
 * The key under the DAG's toolbar: what the box colours of the current mode mean (devices are in
 * the device legend above; states by swatch; op time and output bytes as a scale from the
 * smallest to the largest value shown), then every other mark the graph in view uses, each drawn
 * as dagpaint draws it (dagmarks.MARKS: edges, transfers, dashed simulated ops, folded and opened
 * scopes, series, while loops, ops not executed, failures, requests not honoured, moved and
 * running ops).
 */
import { NO_VALUE_COLOUR, MIXED_COLOUR, STATE_COLOURS, sequentialColour } from './colours';
import type { BoxColours } from './dagcolour';
import { MARKS, type Mark, type MarkId } from './dagmarks';
import type { DagTheme } from './dagpaint';
import { element } from './dom';
import { formatBytes, formatNs } from './format';
import { OP_STATES } from './opstate';
import type { ColourMode } from './types';

function swatch(doc: Document, colour: string, text: string, className = ''): HTMLElement {
  const item = element(doc, 'span', `placeviz-key-item ${className}`.trim());
  const mark = element(doc, 'span', 'placeviz-key-swatch');
  mark.style.background = colour;
  item.append(mark, element(doc, 'span', 'placeviz-key-text', text));
  return item;
}

/** A CSS border for a stroke: its width, dotted or dashed as its pattern, in `colour`. */
function border({ stroke }: Mark, colour: string): string {
  const style =
    stroke.dash.length === 0 ? 'solid' : stroke.dash[0] < stroke.width + 1 ? 'dotted' : 'dashed';
  return `${Math.max(1, Math.round(stroke.width))}px ${style} ${colour}`;
}

/** The key's entry for `mark`, drawn from its stroke in the theme's colours. */
function markItem(doc: Document, mark: Mark, theme: DagTheme): HTMLElement {
  const item = element(doc, 'span', `placeviz-key-item placeviz-key-${mark.id}`);
  item.dataset.mark = mark.id;
  const colour = theme[mark.colour];
  const drawn = element(
    doc,
    'span',
    mark.shape === 'line' ? 'placeviz-key-line' : 'placeviz-key-swatch placeviz-key-mark',
  );
  if (mark.shape === 'line') {
    drawn.style.borderTop = border(mark, colour);
  } else {
    drawn.style.border = border(mark, colour);
    drawn.style.background = theme.background;
    if (['folded', 'opened', 'series', 'loop'].includes(mark.id)) {
      drawn.style.borderRadius = '3px';
    }
    if (mark.id === 'not-run') {
      drawn.style.opacity = '0.5'; // the faint box of a branch not taken
    }
    if (mark.id === 'opened' || mark.id === 'loop') {
      drawn.style.background = theme.container;
    }
    if (mark.id === 'series') {
      // The two outlines a series stacks behind its box.
      drawn.style.margin = '4px 4px 0 0'; // room for the stack beside the text
      drawn.style.boxShadow = `2px -2px 0 -1px ${theme.background}, 2px -2px 0 0 ${colour}, 4px -4px 0 -1px ${theme.background}, 4px -4px 0 0 ${colour}`;
    }
    if (mark.id === 'mismatch') {
      // The red corner dagpaint draws at the top right.
      drawn.style.background = `linear-gradient(225deg, ${colour} 35%, transparent 35%)`;
    }
    if (mark.id === 'marked') {
      // The ring and its top-left tab.
      drawn.style.background = `linear-gradient(135deg, ${colour} 35%, transparent 35%)`;
    }
  }
  item.append(drawn, element(doc, 'span', 'placeviz-key-text', mark.text));
  return item;
}

/**
 * Fill `root` with the key of `mode`: `colours` are the boxes' current colours; `used` the
 * marks the graph in view draws (dagmarks.marksUsed), each listed, in MARKS's order.
 */
export function renderKey(
  root: HTMLElement,
  mode: ColourMode,
  colours: BoxColours,
  theme: DagTheme,
  used: ReadonlySet<MarkId>,
): void {
  const doc = root.ownerDocument;
  const items: HTMLElement[] = [];
  root.dataset.mode = mode;
  if (mode === 'device') {
    items.push(element(doc, 'span', 'placeviz-key-title', 'fill: device (legend above)'));
    items.push(swatch(doc, MIXED_COLOUR, 'several devices'));
  } else if (mode === 'state') {
    items.push(element(doc, 'span', 'placeviz-key-title', 'fill: state at the scrubber time'));
    for (const state of OP_STATES) {
      items.push(swatch(doc, STATE_COLOURS[state], state));
    }
  } else {
    const scale = mode === 'time' ? 'time' : 'memory';
    const [low, high] = colours.range ?? [NaN, NaN];
    const format = (v: number) => (mode === 'time' ? formatNs(v) : formatBytes(v));
    items.push(
      element(
        doc,
        'span',
        'placeviz-key-title',
        mode === 'time' ? 'fill: op time' : 'fill: output bytes',
      ),
    );
    if (Number.isNaN(low)) {
      items.push(element(doc, 'span', 'placeviz-key-text', 'no values yet'));
    } else {
      const bar = element(doc, 'span', 'placeviz-key-scale');
      const stops = [0, 0.25, 0.5, 0.75, 1].map((t) => sequentialColour(t, scale));
      bar.style.background = `linear-gradient(to right, ${stops.join(', ')})`;
      const item = element(doc, 'span', 'placeviz-key-item');
      item.append(
        element(doc, 'span', 'placeviz-key-text', format(low)),
        bar,
        element(doc, 'span', 'placeviz-key-text', `${format(high)} (log)`),
      );
      items.push(item);
    }
    items.push(swatch(doc, NO_VALUE_COLOUR, mode === 'time' ? 'not run' : 'unknown'));
  }
  for (const mark of MARKS) {
    if (used.has(mark.id)) {
      items.push(markItem(doc, mark, theme));
    }
  }
  root.replaceChildren(...items);
}
