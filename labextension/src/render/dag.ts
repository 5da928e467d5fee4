/**
 * The DAG view: a search box, a fit button, a colour-mode select, the colour key and one 2D
 * canvas (not WebGL: a notebook may hold many inspectors, and browsers cap WebGL contexts). Graphs
 * open folded so that, fitted to the canvas, every box says its name (dagfold.ts). The layout is
 * rebuilt only when the graph tables or the opened groups change; event batches only recolour.
 * Painting happens at most once per animation frame, however many changes arrive in between.
 *
 * The element keeps data-ops, data-visible-nodes (boxes drawn: ops plus folded groups),
 * data-in-view (boxes entirely inside the canvas), data-labels-drawn (boxes that say their name),
 * data-label-overlaps, data-marked-nodes (ops of the graph named in `marked`),
 * data-marked-boxes (drawn boxes holding one), data-marks (the marks the key lists:
 * dagmarks.MarkId, space-separated) and data-canvas-height (CSS px) current.
 *
 * The view composes three parts: what it derives from the store (dagderived.ts), its drawing
 * (dagcanvas.ts) and the pointer, wheel and toolbar (daginteraction.ts); it holds where the graph
 * is looked at from (fitted, or moved by the user) and when to paint.
 */
import { element } from './dom';
import { now, schedule, unschedule } from './frames';
import { DagCanvas } from './dagcanvas';
import { DagDerived } from './dagderived';
import type { CanvasSize } from './dagfold';
import { DagInteraction } from './daginteraction';
import type { DagModel } from './dagmodel';
import type { PlacementStore } from './store';
import type { ColourMode } from './types';
import type { View, ViewChange } from './view';
import type { Viewport } from './viewport';
import type { ViewState } from './viewstate';

export interface DagOptions {
  /** Names of ops to mark with a ring of their own (a comparison's moved ops). */
  marked?: ReadonlySet<string>;
}

export interface PaintInfo {
  /** Boxes in the drawn graph: ops plus folded scopes. */
  drawn: number;
  /** Ops in the document. */
  ops: number;
  /** How long the paint took, ms (including a layout it had to redo). */
  ms: number;
}

const COLOUR_MODES: { mode: ColourMode; label: string }[] = [
  { mode: 'device', label: 'colour: device' },
  { mode: 'state', label: 'colour: state at time' },
  { mode: 'time', label: 'colour: op time' },
  { mode: 'memory', label: 'colour: output bytes' },
];

/** Zoom `focus` brings a node to, at least: close enough to read its label. */
const FOCUS_SCALE = 0.8;

export class DagView implements View {
  readonly element: HTMLElement;
  private readonly search: HTMLInputElement;
  private readonly colourSelect: HTMLSelectElement;
  private readonly drawing: DagCanvas;
  private readonly derived: DagDerived;
  private readonly interaction: DagInteraction;
  private readonly paintListeners = new Set<(info: PaintInfo) => void>();
  private readonly disposers: (() => void)[] = [];
  /** The group just opened or closed, kept in view on the next paint. */
  private reveal: string | null = null;
  /** Until the user pans, zooms or focuses, each new graph is fitted to the view. */
  private needsFit = true;
  private userMoved = false;
  /** The canvas size the graph was last fitted to: until the user moves it, a resize refits. */
  private fittedFor: CanvasSize | null = null;
  private frame: number | null = null;

  constructor(
    parent: HTMLElement,
    private readonly store: PlacementStore,
    private readonly state: ViewState,
    options: DagOptions = {},
  ) {
    const doc = parent.ownerDocument;
    this.element = element(doc, 'div', 'placeviz-dag-view');
    const toolbar = element(doc, 'div', 'placeviz-dag-toolbar');
    this.search = element(doc, 'input', 'placeviz-search');
    this.search.type = 'search';
    this.search.placeholder = 'find op, type or device (Enter)';
    this.search.setAttribute('aria-label', 'find op, type or device');
    this.colourSelect = element(doc, 'select', 'placeviz-colour');
    this.colourSelect.setAttribute('aria-label', 'colour ops by');
    for (const { mode, label } of COLOUR_MODES) {
      const option = doc.createElement('option');
      option.value = mode;
      option.textContent = label;
      this.colourSelect.append(option);
    }
    this.colourSelect.value = state.get('colour');
    const searchStatus = element(doc, 'span', 'placeviz-search-status');
    searchStatus.setAttribute('role', 'status');
    const fitButton = element(doc, 'button', 'placeviz-fit', 'fit');
    fitButton.type = 'button';
    fitButton.title = 'show the whole graph';
    toolbar.append(this.search, searchStatus, fitButton, this.colourSelect);
    const key = element(doc, 'div', 'placeviz-dag-key');
    this.drawing = new DagCanvas(this.element, key, store, state);
    const tooltip = element(doc, 'div', 'placeviz-tooltip');
    tooltip.hidden = true;
    this.element.append(toolbar, key, this.drawing.canvas, tooltip);
    parent.appendChild(this.element);
    this.element.dataset.ops = String(store.nodes.length);

    this.derived = new DagDerived(
      store,
      state,
      options.marked ?? new Set<string>(),
      () => ({ laidOut: this.measure(), room: this.drawing.room }),
      (matches) => this.interaction.showMatches(matches),
    );
    this.interaction = new DagInteraction(
      {
        element: this.element,
        canvas: this.drawing.canvas,
        tooltip,
        search: this.search,
        searchStatus,
        fitButton,
        colourSelect: this.colourSelect,
      },
      {
        store,
        state,
        viewport: this.drawing.viewport,
        model: () => this.derived.currentModel(),
        markedBoxes: () => this.derived.markedBoxesDrawn,
        isExpanded: (key) => this.derived.isExpanded(key),
        toggleGroup: (key) => this.toggleGroup(key),
        focus: (nodeId) => this.focus(nodeId),
        fit: () => this.fit(),
        movedByUser: () => this.movedByUser(),
        schedulePaint: () => this.schedulePaint(),
      },
    );
    this.listen();
    this.schedulePaint();
  }

  private get viewport(): Viewport {
    return this.drawing.viewport;
  }

  /** Call `cb` after each complete paint; returns the function that stops it. */
  onPaint(cb: (info: PaintInfo) => void): () => void {
    this.paintListeners.add(cb);
    return () => this.paintListeners.delete(cb);
  }

  /** Show the whole graph again (the fit button). */
  fit(): void {
    this.userMoved = false;
    this.needsFit = true;
    this.schedulePaint();
  }

  /**
   * Open a folded group (or series) by key, or fold an opened one. While the graph is fitted,
   * the other groups the view opened fold or open again so that every label stays readable.
   */
  toggleGroup(key: string): void {
    this.derived.toggle(key, this.userMoved);
    this.reveal = key;
    this.interaction.forgetHover();
    this.interaction.hover(-1, null);
    this.schedulePaint();
  }

  /** Centre the op in the view (unfolding the scopes that hide it), close enough to read. */
  focus(nodeId: number): void {
    const index = this.store.nodeIndex(nodeId);
    if (index < 0) {
      return;
    }
    if (this.derived.unfoldFor(index)) {
      this.interaction.forgetHover();
    }
    const model = this.derived.currentModel();
    const box = model.folded.boxOf[index];
    const { x, y, w, h } = model.layout.boxes;
    this.measure();
    this.movedByUser();
    this.viewport.scale = Math.max(this.viewport.scale, FOCUS_SCALE);
    this.viewport.centreOn(x[box] + w[box] / 2, y[box] + h[box] / 2);
    this.schedulePaint();
  }

  dispose(): void {
    this.interaction.dispose();
    for (const dispose of this.disposers.splice(0)) {
      dispose();
    }
    if (this.frame !== null) {
      unschedule(this.frame);
      this.frame = null;
    }
    this.paintListeners.clear();
    this.element.remove();
  }

  /** The store changed (the inspector's call, once per frame: view.ts). */
  update(change: ViewChange): void {
    this.derived.storeChanged(change);
    if (change.tables) {
      this.element.dataset.ops = String(this.store.nodes.length);
      this.needsFit ||= !this.userMoved;
      this.interaction.forgetHover();
    }
    this.schedulePaint();
  }

  private listen(): void {
    this.disposers.push(
      this.state.listen((changed) => {
        this.derived.stateChanged(changed);
        if (changed.has('colour')) {
          this.colourSelect.value = this.state.get('colour');
        }
        if (changed.has('filter') && this.search.value !== this.state.get('filter')) {
          this.search.value = this.state.get('filter');
        }
        this.schedulePaint();
      }),
    );
    if (typeof ResizeObserver === 'function') {
      const observer = new ResizeObserver(() => this.schedulePaint());
      observer.observe(this.drawing.canvas);
      this.disposers.push(() => observer.disconnect());
    }
  }

  private movedByUser(): void {
    this.userMoved = true;
    this.needsFit = false;
  }

  /** Size the canvas for the graph as last laid out; whether the page has laid it out. */
  private measure(): boolean {
    return this.drawing.measure(this.derived.built?.layout ?? null);
  }

  /**
   * After a group opened or closed: the whole graph fitted again if the user has not moved it,
   * else the group's container (or box) brought into view, zooming out if it must.
   */
  private revealGroup(model: DagModel, key: string): void {
    if (!this.userMoved) {
      this.needsFit = true;
      return;
    }
    const groups = model.hierarchy.groups;
    const container = model.folded.containers.findIndex(({ group }) => groups[group].key === key);
    const box = model.folded.boxes.findIndex(
      (record) => record.group >= 0 && groups[record.group].key === key,
    );
    const rects = container >= 0 ? model.layout.containers : model.layout.boxes;
    const at = container >= 0 ? container : box;
    if (at < 0) {
      return;
    }
    this.viewport.show(rects.x[at], rects.y[at], rects.w[at], rects.h[at]);
  }

  private schedulePaint(): void {
    if (this.frame === null) {
      this.frame = schedule(() => {
        this.frame = null;
        this.paint();
      });
    }
  }

  private paint(): void {
    const start = now();
    const derived = this.derived;
    const laidOut = this.measure();
    if (derived.refolds(laidOut, this.drawing.room, this.userMoved)) {
      derived.refold();
      this.interaction.forgetHover();
    }
    const model = derived.currentModel();
    const height = this.viewport.height;
    this.measure(); // the canvas as tall as this graph needs
    if (this.reveal !== null) {
      this.revealGroup(model, this.reveal);
      this.reveal = null;
    }
    const fitted = this.fittedFor;
    if (
      !this.userMoved &&
      laidOut &&
      (fitted?.width !== this.viewport.width || fitted?.height !== this.viewport.height)
    ) {
      this.needsFit = true; // the page gave the canvas its real size, or a cell resized it
    }
    if (this.userMoved && height !== this.viewport.height) {
      this.viewport.offsetY += (this.viewport.height - height) / 2; // keep the centre in view
    }
    if (this.needsFit) {
      this.needsFit = !laidOut;
      this.viewport.fit(model.layout.width, model.layout.height);
      this.fittedFor = laidOut
        ? { width: this.viewport.width, height: this.viewport.height }
        : null;
    }
    const coloursFresh = derived.coloursStale;
    const colours = derived.currentColours(model);
    const dimmed = derived.currentDimmed(model);
    const live = derived.currentLive(model);
    const markedOps = derived.currentMarkedNodes().reduce((n, m) => n + m, 0);
    const marked = markedOps > 0 ? derived.currentMarkedBoxes(model) : null;
    const alerts = derived.currentAlerts(model);
    const flow = derived.currentFlow(model);
    this.drawing.draw({
      model,
      colours,
      coloursFresh,
      dimmed,
      live,
      markedOps,
      marked,
      alerts,
      flow,
      flowRun: derived.flowRun,
    });
    const info = {
      drawn: model.folded.boxes.length,
      ops: this.store.nodes.length,
      ms: now() - start,
    };
    for (const listener of [...this.paintListeners]) {
      listener(info);
    }
  }
}
