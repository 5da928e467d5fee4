/**
 * The DAG view: a search box, a colour-mode select and one 2D canvas (not WebGL: a notebook may
 * hold many inspectors, and browsers cap WebGL contexts). The layout is rebuilt only when the graph
 * tables or the folded scopes change; event batches only recolour. Painting happens at most once
 * per animation frame, however many changes arrive in between.
 */
import { element } from './dom';
import { now, schedule, unschedule } from './frames';
import { colourBoxes, progressMarks, type BoxColours } from './dagcolour';
import { buildDagModel, type DagModel } from './dagmodel';
import { paintDag, type DagTheme } from './dagpaint';
import { tooltipLines } from './dagtooltip';
import { collapseScopeOf, defaultCollapsed, expandScope } from './scopes';
import { findOp, matchOps } from './search';
import type { PlacementStore, StoreChange } from './store';
import type { ColourMode } from './types';
import { Viewport } from './viewport';
import type { ViewState } from './viewstate';

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

/** Canvas size when the page has not laid it out (a hidden output, or jsdom). */
const FALLBACK_WIDTH = 640;
const FALLBACK_HEIGHT = 380;
/** A press that moves less than this (px) is a click, not a drag. */
const CLICK_SLOP = 4;
/** Zoom `focus` brings a node to, at least: close enough to read its label. */
const FOCUS_SCALE = 0.8;

const THEME_DEFAULTS: Record<keyof DagTheme, [string, string]> = {
  foreground: ['--placeviz-fg', '#212121'],
  muted: ['--placeviz-fg-muted', '#757575'],
  edge: ['--placeviz-dag-edge', '#9e9e9e'],
  transfer: ['--placeviz-dag-transfer', '#e65100'],
  accent: ['--placeviz-accent', '#1976d2'],
  mismatch: ['--placeviz-error', '#d32f2f'],
  running: ['--placeviz-dag-running', '#ffa000'],
};

export class DagView {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D | null;
  private readonly search: HTMLInputElement;
  private readonly colourSelect: HTMLSelectElement;
  private readonly tooltip: HTMLElement;
  private readonly viewport = new Viewport();
  private readonly paintListeners = new Set<(info: PaintInfo) => void>();
  private readonly disposers: (() => void)[] = [];
  private collapsed: Set<string>;
  private model: DagModel | null = null;
  private colours: BoxColours | null = null;
  private dimmed: Uint8Array | null = null;
  private dimmedStale = true;
  /** Per box, the run in flight's mark; stale after a progress or graph change. */
  private live: Uint8Array | null = null;
  private liveStale = true;
  /** Until the user pans, zooms or focuses, each new graph is fitted to the view. */
  private needsFit = true;
  private userMoved = false;
  /** Until the user folds or opens a scope, large graphs get the default folding. */
  private userFolded = false;
  private frame: number | null = null;
  private hoverBox = -1;
  private press: { x: number; y: number; dragging: boolean } | null = null;

  constructor(
    parent: HTMLElement,
    private readonly store: PlacementStore,
    private readonly state: ViewState,
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
    toolbar.append(this.search, this.colourSelect);
    this.canvas = element(doc, 'canvas', 'placeviz-dag');
    this.tooltip = element(doc, 'div', 'placeviz-tooltip');
    this.tooltip.hidden = true;
    this.element.append(toolbar, this.canvas, this.tooltip);
    parent.appendChild(this.element);
    this.ctx = this.canvas.getContext('2d');
    this.collapsed = defaultCollapsed(store.nodes.map((n) => n.name));

    this.listen();
    this.schedulePaint();
  }

  /** Call `cb` after each complete paint; returns the function that stops it. */
  onPaint(cb: (info: PaintInfo) => void): () => void {
    this.paintListeners.add(cb);
    return () => this.paintListeners.delete(cb);
  }

  /** Centre the op in the view (unfolding the scopes that hide it), close enough to read. */
  focus(nodeId: number): void {
    const index = this.store.nodeIndex(nodeId);
    if (index < 0) {
      return;
    }
    const name = this.store.nodes[index].name;
    const hiding = [...this.collapsed].filter((scope) => name.startsWith(`${scope}/`));
    if (hiding.length > 0) {
      hiding.forEach((scope) => this.collapsed.delete(scope));
      this.userFolded = true;
      this.invalidateModel();
    }
    const model = this.currentModel();
    const box = model.folded.boxOf[index];
    this.measure();
    this.movedByUser();
    this.viewport.scale = Math.max(this.viewport.scale, FOCUS_SCALE);
    this.viewport.centreOn(
      model.layout.x[box] + model.layout.nodeWidth / 2,
      model.layout.y[box] + model.layout.nodeHeight / 2,
    );
    this.schedulePaint();
  }

  dispose(): void {
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

  // -- reacting to the store, the shared state and the pointer --------------------------------

  private listen(): void {
    this.disposers.push(
      this.store.onChange((change: StoreChange) => {
        if (change === 'tables') {
          if (!this.userFolded) {
            this.collapsed = defaultCollapsed(this.store.nodes.map((n) => n.name));
          }
          this.needsFit ||= !this.userMoved;
          this.invalidateModel();
          this.schedulePaint();
        } else if (change === 'progress') {
          // The run in flight moved on: its marks change in every mode, and the live states in
          // 'state' mode (the layout stays).
          this.liveStale = true;
          if (this.state.get('colour') === 'state' && this.state.get('time') === null) {
            this.colours = null;
          }
          this.schedulePaint();
        } else if (this.state.get('colour') === 'state' || this.state.get('colour') === 'time') {
          // Events change only these colourings; device and memory colours stay as drawn.
          this.colours = null;
          this.schedulePaint();
        }
      }),
      this.state.listen((changed) => {
        if (changed.has('colour')) {
          this.colourSelect.value = this.state.get('colour');
          this.colours = null;
        }
        if (changed.has('time') && this.state.get('colour') === 'state') {
          this.colours = null;
        }
        if (changed.has('filter')) {
          this.dimmedStale = true;
          if (this.search.value !== this.state.get('filter')) {
            this.search.value = this.state.get('filter');
          }
        }
        this.schedulePaint();
      }),
    );
    this.on(this.search, 'keydown', (event) => {
      if ((event as KeyboardEvent).key === 'Enter') {
        this.searchFor(this.search.value);
      }
    });
    this.on(this.colourSelect, 'change', () => {
      this.state.set({ colour: this.colourSelect.value as ColourMode });
    });
    this.on(this.canvas, 'wheel', (event) => this.onWheel(event as WheelEvent), { passive: false });
    this.on(this.canvas, 'mousedown', (event) => this.onPress(event as MouseEvent));
    this.on(this.canvas, 'mousemove', (event) => this.onMove(event as MouseEvent));
    this.on(this.canvas, 'mouseleave', () => this.hover(-1, null));
    this.on(this.canvas, 'dblclick', (event) => this.onDoubleClick(event as MouseEvent));
    const win = this.element.ownerDocument.defaultView;
    if (win) {
      this.on(win, 'mouseup', (event) => this.onRelease(event as MouseEvent));
      this.on(win, 'mousemove', (event) => this.onDrag(event as MouseEvent));
    }
    if (typeof ResizeObserver === 'function') {
      const observer = new ResizeObserver(() => this.schedulePaint());
      observer.observe(this.canvas);
      this.disposers.push(() => observer.disconnect());
    }
  }

  private on(
    target: EventTarget,
    type: string,
    handler: (event: Event) => void,
    options?: AddEventListenerOptions,
  ): void {
    target.addEventListener(type, handler, options);
    this.disposers.push(() => target.removeEventListener(type, handler, options));
  }

  /** Enter in the search box: filter by the text and centre the first match. */
  private searchFor(text: string): void {
    this.state.set({ filter: text.trim() });
    const found = findOp(this.store, text);
    if (found !== null) {
      this.focus(found);
    }
  }

  private pointer(event: MouseEvent): { x: number; y: number } {
    const rect = this.canvas.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  private boxAt(event: MouseEvent): number {
    const { x, y } = this.pointer(event);
    return this.currentModel().grid.hitTest(this.viewport.toWorldX(x), this.viewport.toWorldY(y));
  }

  private onWheel(event: WheelEvent): void {
    event.preventDefault();
    const lines = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1;
    const { x, y } = this.pointer(event);
    this.movedByUser();
    this.viewport.zoomAt(x, y, Math.exp(-event.deltaY * lines * 0.0015));
    this.schedulePaint();
  }

  private onPress(event: MouseEvent): void {
    if (event.button === 0) {
      this.press = { x: event.clientX, y: event.clientY, dragging: false };
    }
  }

  private onDrag(event: MouseEvent): void {
    const press = this.press;
    if (press === null) {
      return;
    }
    const dx = event.clientX - press.x;
    const dy = event.clientY - press.y;
    if (!press.dragging && Math.hypot(dx, dy) < CLICK_SLOP) {
      return;
    }
    press.dragging = true;
    press.x = event.clientX;
    press.y = event.clientY;
    this.movedByUser();
    this.viewport.panBy(dx, dy);
    this.hover(-1, null);
    this.schedulePaint();
  }

  private onRelease(event: MouseEvent): void {
    const press = this.press;
    this.press = null;
    if (press === null || press.dragging || event.target !== this.canvas) {
      return;
    }
    const box = this.boxAt(event);
    const node = box < 0 ? -1 : this.currentModel().folded.boxes[box].node;
    if (node >= 0) {
      this.state.set({ selected: this.store.nodes[node].id });
    }
  }

  private onMove(event: MouseEvent): void {
    if (this.press?.dragging) {
      return;
    }
    this.hover(this.boxAt(event), event);
  }

  /** Double-click a folded scope to open it; an op to fold its scope back. */
  private onDoubleClick(event: MouseEvent): void {
    const box = this.boxAt(event);
    if (box < 0) {
      return;
    }
    const record = this.currentModel().folded.boxes[box];
    const names = this.store.nodes.map((n) => n.name);
    this.userFolded = true;
    this.collapsed =
      record.node < 0
        ? expandScope(names, this.collapsed, record.name)
        : collapseScopeOf(record.name, this.collapsed);
    this.invalidateModel();
    this.hover(-1, null);
    this.schedulePaint();
  }

  private hover(box: number, event: MouseEvent | null): void {
    const model = this.currentModel();
    const node = box < 0 ? -1 : model.folded.boxes[box].node;
    if (box !== this.hoverBox) {
      this.hoverBox = box;
      this.state.set({ hovered: node < 0 ? null : this.store.nodes[node].id });
      const doc = this.element.ownerDocument;
      this.tooltip.replaceChildren(
        ...(box < 0 ? [] : tooltipLines(this.store, model, box)).map((text, i) =>
          element(doc, 'div', i === 0 ? 'placeviz-tooltip-title' : 'placeviz-tooltip-line', text),
        ),
      );
      this.tooltip.hidden = box < 0;
    }
    if (box >= 0 && event !== null) {
      const rect = this.element.getBoundingClientRect();
      this.tooltip.style.left = `${event.clientX - rect.left + 14}px`;
      this.tooltip.style.top = `${event.clientY - rect.top + 14}px`;
    }
  }

  // -- derived drawing state and painting -----------------------------------------------------

  private movedByUser(): void {
    this.userMoved = true;
    this.needsFit = false;
  }

  private invalidateModel(): void {
    this.model = null;
    this.colours = null;
    this.dimmedStale = true;
    this.liveStale = true;
    this.hoverBox = -1;
    this.tooltip.hidden = true;
  }

  private currentModel(): DagModel {
    if (this.model === null) {
      this.model = buildDagModel(this.store, this.collapsed);
    }
    return this.model;
  }

  private currentColours(model: DagModel): BoxColours {
    if (this.colours === null) {
      this.colours = colourBoxes(
        model,
        this.store,
        this.state.get('colour'),
        this.state.get('time'),
      );
    }
    return this.colours;
  }

  /** Per box, 1 when none of its ops matches the filter; counts the matching boxes. */
  private currentDimmed(model: DagModel): Uint8Array | null {
    if (this.dimmedStale) {
      this.dimmedStale = false;
      const matches = matchOps(this.store, this.state.get('filter'));
      if (matches === null) {
        this.dimmed = null;
      } else {
        const dimmed = new Uint8Array(model.folded.boxes.length).fill(1);
        matches.forEach((hit, node) => {
          if (hit) {
            dimmed[model.folded.boxOf[node]] = 0;
          }
        });
        this.dimmed = dimmed;
      }
    }
    return this.dimmed;
  }

  private currentLive(model: DagModel): Uint8Array | null {
    if (this.liveStale) {
      this.liveStale = false;
      this.live = progressMarks(model, this.store);
    }
    return this.live;
  }

  private schedulePaint(): void {
    if (this.frame === null) {
      this.frame = schedule(() => {
        this.frame = null;
        this.paint();
      });
    }
  }

  /**
   * Size the canvas backing store to its CSS size times the device pixel ratio; returns whether
   * the page has laid the canvas out (a hidden output has no size yet).
   */
  private measure(): boolean {
    const dpr = this.devicePixelRatio();
    const laidOut = this.canvas.clientWidth > 0 && this.canvas.clientHeight > 0;
    const width = this.canvas.clientWidth || FALLBACK_WIDTH;
    const height = this.canvas.clientHeight || FALLBACK_HEIGHT;
    this.viewport.width = width;
    this.viewport.height = height;
    const pixelsWide = Math.round(width * dpr);
    const pixelsHigh = Math.round(height * dpr);
    if (this.canvas.width !== pixelsWide || this.canvas.height !== pixelsHigh) {
      this.canvas.width = pixelsWide;
      this.canvas.height = pixelsHigh;
    }
    return laidOut;
  }

  private devicePixelRatio(): number {
    return this.element.ownerDocument.defaultView?.devicePixelRatio || 1;
  }

  private theme(): DagTheme {
    const style = this.element.ownerDocument.defaultView?.getComputedStyle(this.element);
    const theme = {} as DagTheme;
    for (const key of Object.keys(THEME_DEFAULTS) as (keyof DagTheme)[]) {
      const [variable, fallback] = THEME_DEFAULTS[key];
      theme[key] = style?.getPropertyValue(variable).trim() || fallback;
    }
    return theme;
  }

  private paint(): void {
    const start = now();
    const model = this.currentModel();
    const laidOut = this.measure();
    if (this.needsFit) {
      // Fitted again once the page gives the canvas its real size.
      this.needsFit = !laidOut;
      this.viewport.fit(model.layout.width, model.layout.height);
    }
    const colours = this.currentColours(model);
    const dimmed = this.currentDimmed(model);
    const live = this.currentLive(model);
    const boxOfNode = (id: number | null) => {
      const index = id === null ? -1 : this.store.nodeIndex(id);
      return index < 0 ? -1 : model.folded.boxOf[index];
    };
    if (this.ctx !== null) {
      paintDag({
        ctx: this.ctx,
        model,
        nodes: this.store.nodes,
        viewport: this.viewport,
        devicePixelRatio: this.devicePixelRatio(),
        colours,
        dimmed,
        live,
        hoveredBox: boxOfNode(this.state.get('hovered')),
        selectedBox: boxOfNode(this.state.get('selected')),
        theme: this.theme(),
      });
    }
    const boxes = model.folded.boxes.length;
    this.element.dataset.boxes = String(boxes);
    this.element.dataset.matching = String(
      dimmed === null ? boxes : dimmed.reduce((n, d) => n + (d ? 0 : 1), 0),
    );
    const info = { drawn: boxes, ops: this.store.nodes.length, ms: now() - start };
    for (const listener of [...this.paintListeners]) {
      listener(info);
    }
  }
}
