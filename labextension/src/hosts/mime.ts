/**
 * The MIME renderer host: `application/vnd.placeviz+json` outputs (a whole placement document),
 * so a saved notebook shows the inspector without a kernel, and
 * `application/vnd.placeviz.compare+json` outputs (two placements side by side: compare.ts). A
 * document that cannot be read shows a one-line error instead of throwing into JupyterLab's
 * output area. An output that is the saved copy of a live widget's document (hosts/live.ts)
 * shows nothing while that widget is on the page.
 */
import { documentError } from '../render/dom';
import { liveModelOf, liveViewShown } from './live';
import { now } from '../render/frames';
import { Widget } from '@lumino/widgets';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { COMPARE_MIME_TYPE, createComparison } from '../render/compare';
import { createInspector } from '../render/inspector';
import { PlacementStore } from '../render/store';

export const MIME_TYPE = 'application/vnd.placeviz+json';
export { COMPARE_MIME_TYPE };

export class PlacementRenderer extends Widget implements IRenderMime.IRenderer {
  private view: { dispose(): void } | null = null;

  constructor(private readonly mimeType: string = MIME_TYPE) {
    super();
    this.addClass('placeviz-mime');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const startedAt = now();
    this.view?.dispose();
    this.view = null;
    this.node.replaceChildren();
    const comparing = this.mimeType === COMPARE_MIME_TYPE;
    const live = comparing ? null : liveModelOf(model.metadata, this.mimeType);
    if (live !== null && liveViewShown(this.node.ownerDocument, live)) {
      return Promise.resolve(); // a saved copy of what the live view above shows
    }
    try {
      let data: unknown = model.data[this.mimeType];
      if (typeof data === 'string') {
        data = JSON.parse(data);
      }
      this.view = comparing
        ? createComparison(this.node, data, { startedAt })
        : createInspector(this.node, PlacementStore.fromDocument(data), { startedAt });
    } catch (error) {
      const what = comparing ? 'comparison' : 'placement document';
      this.node.appendChild(documentError(this.node.ownerDocument, error, what));
    }
    return Promise.resolve();
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.view?.dispose();
    this.view = null;
    super.dispose();
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE, COMPARE_MIME_TYPE],
  defaultRank: 0,
  createRenderer: (options) => new PlacementRenderer(options.mimeType),
};

const extension: IRenderMime.IExtension = {
  id: 'placeviz:mime',
  description:
    'Shows placeviz placement documents (application/vnd.placeviz+json) and comparisons of two ' +
    '(application/vnd.placeviz.compare+json).',
  rendererFactory,
  rank: 0,
  dataType: 'json',
};

export default extension;
