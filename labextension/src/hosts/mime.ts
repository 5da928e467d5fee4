/**
 * The MIME renderer host: `application/vnd.placeviz+json` outputs (a whole placement document),
 * so a saved notebook shows the inspector without a kernel. A document that cannot be read shows
 * a one-line error instead of throwing into JupyterLab's output area. An output that is the saved
 * copy of a live widget's document (hosts/live.ts) shows nothing while that widget is on the page.
 */
import { documentError } from '../render/dom';
import { liveModelOf, liveViewShown } from './live';
import { now } from '../render/frames';
import { Widget } from '@lumino/widgets';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { createInspector, type Inspector } from '../render/inspector';
import { PlacementStore } from '../render/store';

export const MIME_TYPE = 'application/vnd.placeviz+json';

export class PlacementRenderer extends Widget implements IRenderMime.IRenderer {
  private inspector: Inspector | null = null;

  constructor(private readonly mimeType: string = MIME_TYPE) {
    super();
    this.addClass('placeviz-mime');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const startedAt = now();
    this.inspector?.dispose();
    this.inspector = null;
    this.node.replaceChildren();
    const live = liveModelOf(model.metadata, this.mimeType);
    if (live !== null && liveViewShown(this.node.ownerDocument, live)) {
      return Promise.resolve(); // a saved copy of what the live view above shows
    }
    try {
      let data: unknown = model.data[this.mimeType];
      if (typeof data === 'string') {
        data = JSON.parse(data);
      }
      const store = PlacementStore.fromDocument(data);
      this.inspector = createInspector(this.node, store, { startedAt });
    } catch (error) {
      this.node.appendChild(documentError(this.node.ownerDocument, error));
    }
    return Promise.resolve();
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.inspector?.dispose();
    this.inspector = null;
    super.dispose();
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  defaultRank: 0,
  createRenderer: (options) => new PlacementRenderer(options.mimeType),
};

const extension: IRenderMime.IExtension = {
  id: 'placeviz:mime',
  description: 'Shows placeviz placement documents (application/vnd.placeviz+json).',
  rendererFactory,
  rank: 0,
  dataType: 'json',
};

export default extension;
