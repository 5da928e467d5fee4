/**
 * The live widget host: `placeviz.PlacementInspector` (docs/inspector.md).
 *
 * The model owns the PlacementStore: it is built from the `document` trait and kept current by the
 * kernel's custom messages even while no view is shown (an output area being re-rendered), and
 * every view of the model draws the same store.
 */
import { element } from '../render/dom';
import { now } from '../render/frames';
import { DOMWidgetModel, DOMWidgetView, type ISerializers } from '@jupyter-widgets/base';
import { createInspector, type Inspector } from '../render/inspector';
import { applyMessage, type BufferLike, type LiveMessage } from '../render/live';
import { PlacementStore } from '../render/store';
import { SHOWN_EVENTS, type PlacementDocument, type Tables } from '../render/types';
import { visibleText } from '../render/visible';
import { markLiveView } from './live';

export { applyMessage, parseProgress, type LiveMessage } from '../render/live';

export const MODULE_NAME = 'placeviz';
export const MODULE_VERSION = '0.1.0';
/** What the Python widget declares as `_model_module_version` / `_view_module_version`. */
const MODULE_RANGE = '^0.1.0';

export const EMPTY_DOCUMENT = {
  schema: 'placeviz/1',
  origin_ns: 0,
  devices: [],
  nodes: [],
  edges: [],
  runs: [],
  events: {},
};

/**
 * Show `doc` (a whole placement document) in `store`: in place when the schema is the same (views
 * keep their selection), else in a new store. Returns the store that now holds the document.
 */
export function applyDocument(store: PlacementStore | null, doc: unknown): PlacementStore {
  const fresh = PlacementStore.fromDocument(doc ?? EMPTY_DOCUMENT);
  if (store === null || store.schema !== fresh.schema) {
    return fresh;
  }
  const source = (doc ?? EMPTY_DOCUMENT) as Record<string, unknown>;
  store.applyTables(source as unknown as Tables);
  store.setPrediction(fresh.prediction);
  store.reset();
  const events = source.events;
  if (events && typeof events === 'object') {
    store.appendLists(events as Record<string, number[]>);
  }
  return store;
}

/**
 * The inspector models on this page, by model id, until closed: a kernel that stops mid-cell
 * leaves their views in the notebook, and hosts/rescue.ts writes what they show in their place.
 */
const openModels = new Map<string, PlacementInspectorModel>();

/**
 * The document the inspector model `modelId` shows, to keep in a notebook (at most SHOWN_EVENTS
 * events, else the latest run's); null when no such model is open here.
 */
export function inspectorDocument(modelId: string): PlacementDocument | null {
  return openModels.get(modelId)?.store.toDocument(SHOWN_EVENTS) ?? null;
}

export class PlacementInspectorModel extends DOMWidgetModel {
  static override serializers: ISerializers = { ...DOMWidgetModel.serializers };
  static model_name = 'PlacementInspectorModel';
  static model_module = MODULE_NAME;
  static model_module_version = MODULE_RANGE;
  static view_name = 'PlacementInspectorView';
  static view_module = MODULE_NAME;
  static view_module_version = MODULE_RANGE;

  private _store: PlacementStore | null = null;
  /** The last document or message that could not be applied. */
  error: string | null = null;

  override defaults() {
    return {
      ...super.defaults(),
      _model_name: PlacementInspectorModel.model_name,
      _model_module: PlacementInspectorModel.model_module,
      _model_module_version: PlacementInspectorModel.model_module_version,
      _view_name: PlacementInspectorModel.view_name,
      _view_module: PlacementInspectorModel.view_module,
      _view_module_version: PlacementInspectorModel.view_module_version,
      document: null,
    };
  }

  override initialize(
    attributes: Record<string, unknown>,
    options: Parameters<DOMWidgetModel['initialize']>[1],
  ): void {
    super.initialize(attributes, options);
    openModels.set(this.model_id, this);
    this.once('destroy', () => openModels.delete(this.model_id));
    this.on('change:document', () => this.loadDocument());
    this.on('msg:custom', (content: LiveMessage, buffers?: BufferLike[]) => {
      try {
        applyMessage(this.store, content, buffers ?? []);
      } catch (error) {
        this.fail(error);
      }
    });
  }

  /** The store every view draws (built on first use from the `document` trait). */
  get store(): PlacementStore {
    if (this._store === null) {
      this.loadDocument();
    }
    return this._store!;
  }

  private loadDocument(): void {
    const previous = this._store;
    try {
      this._store = applyDocument(previous, this.get('document'));
      this.error = null;
    } catch (error) {
      this._store = previous ?? PlacementStore.fromDocument(EMPTY_DOCUMENT);
      this.fail(error);
    }
    if (previous !== null && this._store !== previous) {
      this.trigger('placeviz:store', this._store);
    }
  }

  private fail(error: unknown): void {
    this.error = error instanceof Error ? error.message : String(error);
    console.error('placeviz:', error);
    this.trigger('placeviz:error', this.error);
  }
}

export class PlacementInspectorView extends DOMWidgetView {
  private inspector: Inspector | null = null;
  private errorLine: HTMLDivElement | null = null;

  override render(): void {
    const startedAt = now();
    this.el.classList.add('placeviz-widget');
    const model = this.model as PlacementInspectorModel;
    markLiveView(this.el, model.model_id);
    this.errorLine = element(document, 'div', 'placeviz-error placeviz-host-error');
    this.el.appendChild(this.errorLine);
    this.showError(model.error);
    this.inspector = createInspector(this.el, model.store, { startedAt });
    this.listenTo(model, 'placeviz:store', () => {
      this.inspector?.dispose();
      this.inspector = createInspector(this.el, model.store);
    });
    this.listenTo(model, 'placeviz:error', (message: string) => this.showError(message));
    this.listenTo(model, 'change:document', () => this.showError(model.error));
  }

  override remove(): void {
    this.inspector?.dispose();
    this.inspector = null;
    return super.remove();
  }

  private showError(message: string | null): void {
    if (this.errorLine) {
      this.errorLine.textContent = message
        ? visibleText(`placeviz: ${message}`, { lines: true })
        : '';
      this.errorLine.hidden = !message;
    }
  }
}
