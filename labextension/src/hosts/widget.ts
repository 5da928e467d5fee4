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
import { decodeBatch } from '../render/batch';
import { createInspector, type Inspector } from '../render/inspector';
import { PlacementStore, type RunProgress } from '../render/store';
import type { RunRecord, Tables } from '../render/types';
import { visibleText } from '../render/visible';
import { markLiveView } from './live';

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

type BufferLike = ArrayBuffer | DataView | ArrayBufferView;

export interface LiveMessage {
  kind?: unknown;
  reset?: unknown;
  tables?: unknown;
  runs?: unknown;
  count?: unknown;
  skipped?: unknown;
  progress?: unknown;
}

/** An update's `progress`: undefined (leave the snapshot), null (clear it) or a valid snapshot. */
export function parseProgress(progress: unknown): RunProgress | null | undefined {
  if (progress === undefined || progress === null) {
    return progress;
  }
  const fail = (what: string): never => {
    throw new Error(`placeviz: update.progress ${what}`);
  };
  if (typeof progress !== 'object' || Array.isArray(progress)) {
    fail('must be an object {run, waiting, running, done} or null');
  }
  const record = progress as Record<string, unknown>;
  if (!Number.isInteger(record.run)) {
    fail('.run must be an integer run id');
  }
  const ids = (key: 'waiting' | 'running' | 'done'): number[] => {
    const list = record[key];
    if (!Array.isArray(list) || !list.every((id) => Number.isInteger(id))) {
      fail(`.${key} must be a list of node ids`);
    }
    return list as number[];
  };
  return {
    run: record.run as number,
    waiting: ids('waiting'),
    running: ids('running'),
    done: ids('done'),
  };
}

/**
 * Apply one kernel -> view `update` (docs/inspector.md, "Live messages") to a store: a reset, new
 * tables, run records to append (the newest RUNS_LISTED kept), the count of events skipped, the
 * events of the buffers, then the snapshot of the run in flight (`progress`: an object replaces
 * it, null clears it), each only when the update has it.
 */
export function applyMessage(
  store: PlacementStore,
  content: LiveMessage,
  buffers: readonly BufferLike[] = [],
): void {
  if (content?.kind !== 'update') {
    throw new Error(`placeviz: unknown message kind ${JSON.stringify(content?.kind)}`);
  }
  // Decoded first, so a malformed update changes nothing.
  const count = Number(content.count ?? 0);
  const batch = count > 0 ? decodeBatch({ count }, [...buffers]) : null;
  if (content.runs !== undefined && !Array.isArray(content.runs)) {
    throw new Error('placeviz: update.runs must be a list of run records');
  }
  const runs = (content.runs ?? []) as RunRecord[];
  const progress = parseProgress(content.progress);
  if (content.reset === true) {
    store.reset();
  }
  const skipped = Number(content.skipped ?? 0);
  if (Number.isFinite(skipped) && skipped > 0) {
    store.addSkipped(skipped);
  }
  if (content.tables !== undefined || content.reset === true || runs.length > 0) {
    const tables = (content.tables ?? store) as Partial<Tables>;
    const kept = content.reset === true ? [] : store.runs;
    store.applyTables({
      origin_ns: tables.origin_ns ?? store.originNs,
      devices: [...(tables.devices ?? store.devices)],
      nodes: [...(tables.nodes ?? store.nodes)],
      edges: [...(tables.edges ?? store.edges)],
      runs: [...kept, ...runs],
    });
  }
  if (batch !== null) {
    store.appendBatch(batch);
  }
  if (progress !== undefined) {
    store.setProgress(progress);
  }
}

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
  store.reset();
  const events = source.events;
  if (events && typeof events === 'object') {
    store.appendLists(events as Record<string, number[]>);
  }
  return store;
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
