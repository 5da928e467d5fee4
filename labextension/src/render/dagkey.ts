/**
 * The key under the DAG's toolbar: what the box colours of the current mode mean (devices are in
 * the device legend above; states by swatch; op time and output bytes as a scale from the
 * smallest to the largest value shown), and the marks every mode shares: transfer edges (dotted
 * between cluster tasks), red
 * failed or unplaced ops, ops not on the device they asked for, and in a comparison the ops the
 * other placement moved.
 */
import { NO_VALUE_COLOUR, MIXED_COLOUR, STATE_COLOURS, sequentialColour } from './colours';
import type { BoxColours } from './dagcolour';
import { element } from './dom';
import { formatBytes, formatNs } from './format';
import { OP_STATES } from './opstate';
import type { ColourMode } from './types';

export interface KeyTheme {
  transfer: string;
  mismatch: string;
  /** The ring of marked ops (a comparison's moved ops). */
  marked?: string;
}

function swatch(doc: Document, colour: string, text: string, className = ''): HTMLElement {
  const item = element(doc, 'span', `placeviz-key-item ${className}`.trim());
  const mark = element(doc, 'span', 'placeviz-key-swatch');
  mark.style.background = colour;
  item.append(mark, element(doc, 'span', 'placeviz-key-text', text));
  return item;
}

function line(doc: Document, colour: string, text: string, border: string): HTMLElement {
  const item = element(doc, 'span', 'placeviz-key-item');
  const mark = element(doc, 'span', 'placeviz-key-line');
  mark.style.borderTop = `${border} ${colour}`;
  item.append(mark, element(doc, 'span', 'placeviz-key-text', text));
  return item;
}

/** Fill `root` with the key of `mode`; `colours` are the boxes' current colours; `network`:
 * the graph shows transfers between cluster tasks; `marked`: it rings the ops a comparison's
 * other placement put elsewhere. */
export function renderKey(
  root: HTMLElement,
  mode: ColourMode,
  colours: BoxColours,
  theme: KeyTheme,
  network = false,
  marked = false,
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
  items.push(line(doc, theme.transfer, 'transfer', '3px dashed'));
  if (network) {
    items.push(line(doc, theme.transfer, 'between tasks (network)', '4px dotted'));
  }
  items.push(swatch(doc, 'transparent', 'failed / not placed', 'placeviz-key-alert'));
  items.push(swatch(doc, 'transparent', 'not on the device it asked for', 'placeviz-key-mismatch'));
  if (marked) {
    items.push(swatch(doc, 'transparent', 'moved in the other placement', 'placeviz-key-marked'));
  }
  root.replaceChildren(...items);
  const mark = (item: string) =>
    root.querySelector<HTMLElement>(`.placeviz-key-${item} .placeviz-key-swatch`)!.style;
  mark('alert').border = `3px solid ${theme.mismatch}`;
  // The outline and corner dagpaint draws on an op the placer put elsewhere (soft placement).
  mark('mismatch').border = `2px solid ${theme.mismatch}`;
  mark('mismatch').background = `linear-gradient(225deg, ${theme.mismatch} 35%, transparent 35%)`;
  if (marked) {
    // The ring and top-left tab dagpaint draws around a marked op.
    const colour = theme.marked ?? theme.transfer;
    mark('marked').border = `2px solid ${colour}`;
    mark('marked').background = `linear-gradient(135deg, ${colour} 35%, transparent 35%)`;
  }
}
