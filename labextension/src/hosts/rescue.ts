/**
 * Keeping the inspector in a notebook whose kernel stops mid-cell. A `%%placement` cell shows a
 * live PlacementInspector widget, which the kernel replaces by the finished document when the
 * cell ends (placeviz/inspector/cell_output.py). A kernel restarted or killed before that leaves a
 * bare widget view, which a saved notebook shows as the text `PlacementInspector()`: the widget's
 * state dies with the kernel. So when a notebook's kernel restarts, dies or is replaced, each
 * widget view output of an inspector model this page holds is replaced by the document the view
 * shows, as the bundle the kernel writes, and the kernel's saved copy of that model's document
 * (older: renewed every few seconds, or not made yet) is emptied.
 */
import type { ISessionContext } from '@jupyterlab/apputils';
import type * as nbformat from '@jupyterlab/nbformat';
import type { NotebookPanel } from '@jupyterlab/notebook';
import { EventKind, type PlacementDocument } from '../render/types';
import { liveModelOf } from './live';
import { MIME_TYPE } from './mime';

/** The MIME type of an ipywidgets view output (`{"model_id": ...}`). */
export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';

/** Kernel states after which the kernel will not finish the cell's output. */
export const STOPPED_STATUSES: ReadonlySet<string> = new Set([
  'restarting',
  'autorestarting',
  'dead',
]);

/** The document a widget model's views show; null when it is no inspector model open here. */
export type DocumentOf = (modelId: string) => PlacementDocument | null;

/** The part of a code cell's output area model (IOutputAreaModel) that the rescue reads and writes. */
export interface Outputs {
  readonly length: number;
  get(index: number): { toJSON(): nbformat.IOutput };
  set(index: number, output: nbformat.IOutput): void;
}

/** The widget model an output is a view of; null when it is no widget view. */
export function widgetModelOf(output: nbformat.IOutput): string | null {
  if (output.output_type !== 'display_data' && output.output_type !== 'execute_result') {
    return null;
  }
  const view = (output.data as nbformat.IMimeBundle | undefined)?.[WIDGET_VIEW_MIME];
  const id = (view as Record<string, unknown> | undefined)?.model_id;
  return typeof id === 'string' && id !== '' ? id : null;
}

/**
 * The bundle the kernel writes for a finished cell (placeviz.events.html.output_bundle), less its
 * HTML page: the document, and a line of text for front ends without the renderer. The text holds
 * counts only; the document's own text is drawn as text by the renderer (hosts/mime.ts).
 */
export function documentBundle(doc: PlacementDocument): nbformat.IMimeBundle {
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const ops = doc.events.kind.filter((kind) => kind === EventKind.OP).length;
  return {
    [MIME_TYPE]: doc as unknown as nbformat.IMimeBundle[string],
    'text/plain':
      `placeviz inspector kept when the kernel stopped: ${count(doc.nodes.length, 'op')} ` +
      `on ${count(doc.devices.length, 'device')}, ${count(doc.runs.length, 'run')}, ` +
      `${count(ops, 'op execution')}`,
  };
}

/**
 * What to write in a cell whose kernel stopped, by output index: each view of an inspector model
 * (`documentOf` knows it) becomes that view's document, and each saved copy of such a model's
 * document (hosts/live.ts) is emptied, as the kernel empties it when the cell ends.
 */
export function rescuedOutputs(
  outputs: readonly nbformat.IOutput[],
  documentOf: DocumentOf,
): Map<number, nbformat.IOutput> {
  const rewritten = new Map<number, nbformat.IOutput>();
  const rescued = new Set<string>();
  outputs.forEach((output, index) => {
    const id = widgetModelOf(output);
    const doc = id === null ? null : documentOf(id);
    if (id !== null && doc !== null) {
      rewritten.set(index, { ...output, data: documentBundle(doc), metadata: {} });
      rescued.add(id);
    }
  });
  outputs.forEach((output, index) => {
    const copyOf = liveModelOf(output.metadata, MIME_TYPE);
    if (copyOf !== null && rescued.has(copyOf)) {
      rewritten.set(index, { ...output, data: {}, metadata: {} });
    }
  });
  return rewritten;
}

/** Write `rescuedOutputs` into one cell's output area model; returns how many it rewrote. */
export function rescueOutputs(outputs: Outputs, documentOf: DocumentOf): number {
  const current = Array.from({ length: outputs.length }, (_, i) => outputs.get(i).toJSON());
  const rewritten = rescuedOutputs(current, documentOf);
  for (const [index, output] of rewritten) {
    outputs.set(index, output);
  }
  return rewritten.size;
}

/** Rescue the outputs of `panel`'s code cells each time its kernel stops or is replaced. */
export function watchNotebook(
  panel: Pick<NotebookPanel, 'content' | 'sessionContext'>,
  documentOf: DocumentOf,
): void {
  const rescue = () => {
    for (const cell of panel.content.model?.cells ?? []) {
      const outputs = cell.type === 'code' ? (cell as { outputs?: Outputs }).outputs : undefined;
      if (outputs !== undefined) {
        rescueOutputs(outputs, documentOf);
      }
    }
  };
  const context: ISessionContext = panel.sessionContext;
  context.statusChanged.connect((_, status) => {
    if (STOPPED_STATUSES.has(status)) {
      rescue();
    }
  });
  context.kernelChanged.connect((_, change) => {
    if (change.oldValue !== null) {
      rescue();
    }
  });
}
