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
 */
import { UNPLACED_COLOUR, devicePalette, transferColour } from './colours';
import { element } from './dom';
import { now, schedule, unschedule } from './frames';
import { colourBoxes, progressMarks, type BoxColours } from './dagcolour';
import { controlFlowOf, shownRun, type ControlFlowRun } from './controlflow';
import { flowMarks, type FlowMarks } from './dagflow';
import { renderKey } from './dagkey';
import { marksUsed } from './dagmarks';
import { readableExpanded, sideBelow, type CanvasSize, type UserFolding } from './dagfold';
import { buildDagModel, storeEdges, storeHierarchy, type DagModel } from './dagmodel';
import { paintDag, type DagTheme } from './dagpaint';
import { toggleRect } from './dagshapes';
import { canvasHeightFor, roomHeight } from './dagsize';
import { containerLines, tooltipLines } from './dagtooltip';
import { CONTAINER_HEADER } from './boxmetrics';
import { groupsHiding, type Hierarchy } from './scopes';
import { findOp, matchOps } from './search';
import type { PlacementStore } from './store';
import type { ColourMode } from './types';
import type { View, ViewChange } from './view';
import { Viewport } from './viewport';
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

/** Canvas size when the page has not laid it out (a hidden output, or jsdom). */
const FALLBACK_WIDTH = 640;
const FALLBACK_HEIGHT = 380;
/** A press that moves less than this (px) is a click, not a drag. */
const CLICK_SLOP = 4;
/** Zoom `focus` brings a node to, at least: close enough to read its label. */
const FOCUS_SCALE = 0.8;

/** Theme colours from CSS variables; transfers take a hue no device has (colours.transferColour). */
const THEME_DEFAULTS: Record<Exclude<keyof DagTheme, 'transfer' | 'marked'>, [string, string]> = {
  foreground: ['--placeviz-fg', '#212121'],
  muted: ['--placeviz-fg-muted', '#757575'],
  background: ['--placeviz-bg', '#ffffff'],
  container: ['--placeviz-dag-container', 'rgba(120, 130, 150, 0.08)'],
  edge: ['--placeviz-dag-edge', '#9e9e9e'],
  accent: ['--placeviz-accent', '#1976d2'],
  mismatch: ['--placeviz-error', '#d32f2f'],
  running: ['--placeviz-dag-running', '#ffa000'],
  loop: ['--placeviz-dag-loop', '#00796b'],
};
/** The ring of marked ops: its CSS variable, else the transfers' hue (one no device has). */
const MARKED_VARIABLE = '--placeviz-dag-marked';

export class DagView implements View {
  readonly element: HTMLElement;
  private readonly canvas: HTMLCanvasElement;
  private readonly ctx: CanvasRenderingContext2D | null;
  private readonly search: HTMLInputElement;
  private readonly searchStatus: HTMLElement;
  private readonly fitButton: HTMLButtonElement;
  private readonly colourSelect: HTMLSelectElement;
  private readonly key: HTMLElement;
  private readonly tooltip: HTMLElement;
  private readonly viewport = new Viewport();
  private readonly paintListeners = new Set<(info: PaintInfo) => void>();
  private readonly disposers: (() => void)[] = [];
  private hierarchy: Hierarchy | null = null;
  private expanded = new Set<string>();
  /** Whether the side groups stand below the graph (chosen with the folding, for the canvas). */
  private sideBelow = false;
  /** The group just opened or closed, kept in view on the next paint. */
  private reveal: string | null = null;
  private model: DagModel | null = null;
  private colours: BoxColours | null = null;
  /** Per box, 1 when it holds an op that failed or was not placed; stale with the colours. */
  private alerts: Uint8Array | null = null;
  private dimmed: Uint8Array | null = null;
  private dimmedStale = true;
  /** Per box, the run in flight's mark; stale after a progress or graph change. */
  private live: Uint8Array | null = null;
  private liveStale = true;
  /** Per node index, 1 when `marked` names it; null until read or after the nodes changed. */
  private markedNodes: Uint8Array | null = null;
  /** Per box, 1 when it holds a marked op; stale with the model. */
  private markedBoxes: Uint8Array | null = null;
  private readonly marked: ReadonlySet<string>;
  /** What the run shown did with loops and conds; null until read or after events changed. */
  private flow: ControlFlowRun | null = null;
  /** Its marks per box and container; stale with the model and the flow. */
  private flowBoxes: FlowMarks | null = null;
  /** Until the user pans, zooms or focuses, each new graph is fitted to the view. */
  private needsFit = true;
  private userMoved = false;
  /** Groups the user opened or folded: kept as they are when the folding is chosen again. */
  private readonly user = { opened: new Set<string>(), folded: new Set<string>() };
  /** The canvas's room: its width and the largest height the page gives it (measure). */
  private room: CanvasSize = { width: FALLBACK_WIDTH, height: FALLBACK_HEIGHT };
  /** The laid-out canvas room the folding was chosen for (null: not laid out then). */
  private foldedFor: CanvasSize | null = null;
  /** The canvas size the graph was last fitted to: until the user moves it, a resize refits. */
  private fittedFor: CanvasSize | null = null;
  private frame: number | null = null;
  /** What the key was last drawn from (the colours, model, alerts, marked and live boxes). */
  private keyInputs: unknown[] = [];
  private hoverBox = -1;
  private press: { x: number; y: number; dragging: boolean } | null = null;

  constructor(
    parent: HTMLElement,
    private readonly store: PlacementStore,
    private readonly state: ViewState,
    options: DagOptions = {},
  ) {
    this.marked = options.marked ?? new Set<string>();
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
    this.searchStatus = element(doc, 'span', 'placeviz-search-status');
    this.searchStatus.setAttribute('role', 'status');
    this.fitButton = element(doc, 'button', 'placeviz-fit', 'fit');
    this.fitButton.type = 'button';
    this.fitButton.title = 'show the whole graph';
    toolbar.append(this.search, this.searchStatus, this.fitButton, this.colourSelect);
    this.key = element(doc, 'div', 'placeviz-dag-key');
    this.canvas = element(doc, 'canvas', 'placeviz-dag');
    // Focusable: the wheel zooms the graph once it has focus (a click), else scrolls the page.
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('aria-label', 'op graph: click to focus, then wheel to zoom');
    this.tooltip = element(doc, 'div', 'placeviz-tooltip');
    this.tooltip.hidden = true;
    this.element.append(toolbar, this.key, this.canvas, this.tooltip);
    parent.appendChild(this.element);
    this.ctx = this.canvas.getContext('2d');
    this.element.dataset.ops = String(store.nodes.length);

    this.listen();
    this.schedulePaint();
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
    const [from, to] = this.expanded.has(key)
      ? [this.user.opened, this.user.folded]
      : [this.user.folded, this.user.opened];
    from.delete(key);
    to.add(key);
    if (this.userMoved) {
      if (this.user.opened.has(key)) {
        this.expanded.add(key);
      } else {
        this.expanded.delete(key);
      }
    } else {
      this.chooseFolding(this.currentHierarchy(), this.user);
    }
    this.reveal = key;
    this.invalidateModel();
    this.hover(-1, null);
    this.schedulePaint();
  }

  /** Centre the op in the view (unfolding the scopes that hide it), close enough to read. */
  focus(nodeId: number): void {
    const index = this.store.nodeIndex(nodeId);
    if (index < 0) {
      return;
    }
    const hiding = groupsHiding(this.currentHierarchy(), index).filter(
      (key) => !this.expanded.has(key),
    );
    if (hiding.length > 0) {
      for (const key of hiding) {
        this.expanded.add(key);
        this.user.folded.delete(key);
        this.user.opened.add(key);
      }
      this.invalidateModel();
    }
    const model = this.currentModel();
    const box = model.folded.boxOf[index];
    const { x, y, w, h } = model.layout.boxes;
    this.measure();
    this.movedByUser();
    this.viewport.scale = Math.max(this.viewport.scale, FOCUS_SCALE);
    this.viewport.centreOn(x[box] + w[box] / 2, y[box] + h[box] / 2);
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

  /** The store changed (the inspector's call, once per frame: view.ts). */
  update(change: ViewChange): void {
    if (change.tables) {
      this.hierarchy = null;
      this.markedNodes = null;
      this.element.dataset.ops = String(this.store.nodes.length);
      this.needsFit ||= !this.userMoved;
      this.invalidateModel();
    }
    if (change.progress) {
      // The run in flight moved on: its marks change in every mode, and the live states in
      // 'state' mode (the layout stays).
      this.liveStale = true;
      if (this.state.get('colour') === 'state' && this.state.get('time') === null) {
        this.colours = null;
      }
    }
    if (change.tables || change.events) {
      this.flow = null;
    }
    if (change.events) {
      this.alerts = null; // a failure shows in every mode
      if (this.state.get('colour') === 'state' || this.state.get('colour') === 'time') {
        // Events change only these colourings; device and memory colours stay as drawn.
        this.colours = null;
      }
    }
    this.schedulePaint();
  }

  private listen(): void {
    this.disposers.push(
      this.state.listen((changed) => {
        if (changed.has('colour')) {
          this.colourSelect.value = this.state.get('colour');
          this.colours = null;
        }
        if (changed.has('time') && this.state.get('colour') === 'state') {
          this.colours = null;
        }
        if (changed.has('run')) {
          this.flow = null; // loops and branches are marked as the picked run ran them
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
    this.on(this.fitButton, 'click', () => this.fit());
    this.on(this.colourSelect, 'change', () => {
      this.state.set({ colour: this.colourSelect.value as ColourMode });
    });
    this.on(this.canvas, 'wheel', (event) => this.onWheel(event as WheelEvent), { passive: false });
    this.on(this.canvas, 'mousedown', (event) => {
      this.canvas.focus({ preventScroll: true });
      this.onPress(event as MouseEvent);
    });
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

  /** "no op matches" when the filter leaves nothing, else the number of matching ops. */
  private showSearchStatus(matches: Uint8Array | null): void {
    const filter = this.state.get('filter');
    if (matches === null) {
      this.searchStatus.textContent = '';
      this.searchStatus.classList.remove('placeviz-search-none');
      return;
    }
    const hits = matches.reduce((n, m) => n + m, 0);
    this.searchStatus.textContent =
      hits === 0
        ? `no op matches “${filter}”`
        : hits === 1
          ? '1 op matches'
          : `${hits.toLocaleString('en-US')} ops match`;
    this.searchStatus.classList.toggle('placeviz-search-none', hits === 0);
  }

  private pointer(event: MouseEvent): { x: number; y: number } {
    const rect = this.canvas.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  private boxAt(event: MouseEvent): number {
    const { x, y } = this.pointer(event);
    return this.currentModel().grid.hitTest(this.viewport.toWorldX(x), this.viewport.toWorldY(y));
  }

  /**
   * The group whose +/- control is under the pointer (a folded box's or a container's), or the
   * container whose title strip is; null when none is.
   */
  private toggleAt(event: MouseEvent, titleToo: boolean): string | null {
    const model = this.currentModel();
    const { x: px, y: py } = this.pointer(event);
    const wx = this.viewport.toWorldX(px);
    const wy = this.viewport.toWorldY(py);
    const inside = (r: { x: number; y: number; w: number; h: number }) =>
      wx >= r.x && wx <= r.x + r.w && wy >= r.y && wy <= r.y + r.h;
    const box = model.grid.hitTest(wx, wy);
    const { boxes, containers } = model.layout;
    if (box >= 0) {
      const group = model.folded.boxes[box].group;
      const hit = toggleRect(boxes.x[box], boxes.y[box], boxes.w[box]);
      return group >= 0 && inside(hit) ? model.hierarchy.groups[group].key : null;
    }
    // The innermost container (containers come in pre-order) whose control or title is hit.
    for (let c = containers.x.length - 1; c >= 0; c--) {
      const { x, y, w } = containers;
      const control = toggleRect(x[c], y[c], w[c]);
      const title = { x: x[c], y: y[c], w: w[c], h: control.y + control.h - y[c] };
      if (inside(control) || (titleToo && inside(title))) {
        return model.hierarchy.groups[model.folded.containers[c].group].key;
      }
    }
    return null;
  }

  private onWheel(event: WheelEvent): void {
    const focused = this.element.ownerDocument.activeElement === this.canvas;
    if (!focused && !event.ctrlKey) {
      return; // the page scrolls on
    }
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
    const toggled = this.toggleAt(event, false);
    if (toggled !== null) {
      this.toggleGroup(toggled);
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
    const box = this.boxAt(event);
    const title = box < 0 ? this.titleAt(event) : -1;
    this.hover(title >= 0 ? -2 - title : box, event);
  }

  /** The innermost container whose title strip is under the pointer, or -1. */
  private titleAt(event: MouseEvent): number {
    const { containers } = this.currentModel().layout;
    const { x: px, y: py } = this.pointer(event);
    const wx = this.viewport.toWorldX(px);
    const wy = this.viewport.toWorldY(py);
    for (let c = containers.x.length - 1; c >= 0; c--) {
      const { x, y, w } = containers;
      if (wx >= x[c] && wx <= x[c] + w[c] && wy >= y[c] && wy <= y[c] + CONTAINER_HEADER) {
        return c;
      }
    }
    return -1;
  }

  /**
   * Double-click a folded group to open it; an op, or a container's title, to fold the group
   * holding it.
   */
  private onDoubleClick(event: MouseEvent): void {
    const model = this.currentModel();
    const box = this.boxAt(event);
    if (box < 0) {
      const title = this.toggleAt(event, true);
      if (title !== null && this.expanded.has(title)) {
        this.toggleGroup(title);
      }
      return;
    }
    const record = model.folded.boxes[box];
    if (record.group >= 0) {
      this.toggleGroup(model.hierarchy.groups[record.group].key);
      return;
    }
    const container = model.folded.boxParent[box];
    if (container >= 0) {
      this.toggleGroup(model.hierarchy.groups[model.folded.containers[container].group].key);
    }
  }

  /** Hover `target`: a box index, -2 - c for container c's title, -1 for nothing. */
  private hover(target: number, event: MouseEvent | null): void {
    const model = this.currentModel();
    const box = target;
    const node = box < 0 ? -1 : model.folded.boxes[box].node;
    if (target !== this.hoverBox) {
      this.hoverBox = target;
      this.state.set({ hovered: node < 0 ? null : this.store.nodes[node].id });
      const doc = this.element.ownerDocument;
      const lines =
        target >= 0
          ? tooltipLines(this.store, model, target)
          : target <= -2
            ? containerLines(model, -2 - target)
            : [];
      if (target >= 0 && this.markedBoxes?.[target] === 1) {
        lines.push(
          node >= 0
            ? 'moved: the other placement puts it elsewhere'
            : 'holds ops the other placement moved',
        );
      }
      this.tooltip.replaceChildren(
        ...lines.map((text, i) =>
          element(doc, 'div', i === 0 ? 'placeviz-tooltip-title' : 'placeviz-tooltip-line', text),
        ),
      );
      this.tooltip.hidden = target === -1;
    }
    if (target !== -1 && event !== null) {
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
    this.flowBoxes = null;
    this.colours = null;
    this.alerts = null;
    this.markedBoxes = null;
    this.dimmedStale = true;
    this.liveStale = true;
    this.hoverBox = -1;
    this.tooltip.hidden = true;
  }

  private currentHierarchy(): Hierarchy {
    if (this.hierarchy === null) {
      this.hierarchy = storeHierarchy(this.store);
      this.chooseFolding(this.hierarchy, this.user);
      this.model = null;
    }
    return this.hierarchy;
  }

  /**
   * The user's groups and what else keeps labels readable, fitted to the canvas as it is now, and
   * where the side groups stand for it.
   */
  private chooseFolding(hierarchy: Hierarchy, user: UserFolding): void {
    const laidOut = this.measure();
    const canvas = this.room;
    const edges = storeEdges(this.store);
    this.expanded = readableExpanded(hierarchy, this.store.nodes, edges, canvas, user);
    this.sideBelow = sideBelow(hierarchy, this.store.nodes, edges, this.expanded, canvas);
    this.foldedFor = laidOut ? canvas : null;
  }

  /**
   * Whether the folding is chosen again before this paint: the user has not moved the graph,
   * and the canvas got its real size, shrank (the fit would zoom out past the labels) or grew by
   * more than a quarter.
   */
  private refolds(laidOut: boolean): boolean {
    if (this.userMoved || this.hierarchy === null || !laidOut) {
      return false;
    }
    const was = this.foldedFor;
    const changed = (before: number, now: number) => now < before - 2 || now - before > before / 4;
    return (
      was === null || changed(was.width, this.room.width) || changed(was.height, this.room.height)
    );
  }

  private currentModel(): DagModel {
    const hierarchy = this.currentHierarchy();
    if (this.model === null) {
      this.model = buildDagModel(this.store, this.expanded, hierarchy, this.sideBelow);
    }
    return this.model;
  }

  /** Loops and ops not executed in the run shown (the picked run, else the latest), per box. */
  private currentFlow(model: DagModel): FlowMarks | null {
    if (this.flow === null) {
      this.flow = controlFlowOf(this.store, shownRun(this.store.runs, this.state.get('run')));
      this.flowBoxes = null;
    }
    if (this.flowBoxes === null) {
      this.flowBoxes = flowMarks(model, this.flow);
    }
    return this.flow.loops.length > 0 || this.flow.notRunCount > 0 ? this.flowBoxes : null;
  }

  /** Per box, 1 when one of its ops failed (in the latest run it ran in) or was not placed. */
  private currentAlerts(model: DagModel): Uint8Array {
    if (this.alerts === null) {
      const failed = this.store.opSpans().failed;
      const alerts = new Uint8Array(model.folded.boxes.length);
      this.store.nodes.forEach((node, i) => {
        if (failed[i] === 1 || node.device === null) {
          alerts[model.folded.boxOf[i]] = 1;
        }
      });
      this.alerts = alerts;
    }
    return this.alerts;
  }

  /** Per node index, 1 when `marked` names the op. */
  private currentMarkedNodes(): Uint8Array {
    if (this.markedNodes === null) {
      const marks = new Uint8Array(this.store.nodes.length);
      if (this.marked.size > 0) {
        this.store.nodes.forEach((node, i) => {
          marks[i] = this.marked.has(node.name) ? 1 : 0;
        });
      }
      this.markedNodes = marks;
    }
    return this.markedNodes;
  }

  /** Per box, 1 when it holds a marked op (a folded group holding one is marked too). */
  private currentMarkedBoxes(model: DagModel): Uint8Array {
    if (this.markedBoxes === null) {
      const boxes = new Uint8Array(model.folded.boxes.length);
      this.currentMarkedNodes().forEach((mark, i) => {
        if (mark === 1) {
          boxes[model.folded.boxOf[i]] = 1;
        }
      });
      this.markedBoxes = boxes;
    }
    return this.markedBoxes;
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
      this.showSearchStatus(matches);
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
   * The canvas's room (its width, and the height the page gives the graph: --placeviz-dag-room,
   * else the canvas's laid-out height) and its height: where the page gives a room, as tall as
   * the current graph fitted to it needs (dagsize.ts), else the room's. Sizes the canvas and its
   * backing store (CSS size times the device pixel ratio); returns whether the page has laid the
   * canvas out (a hidden output has no size yet).
   */
  private measure(): boolean {
    const dpr = this.devicePixelRatio();
    const laidOut = this.canvas.clientWidth > 0 && this.canvas.clientHeight > 0;
    const width = this.canvas.clientWidth || FALLBACK_WIDTH;
    const style = this.element.ownerDocument.defaultView?.getComputedStyle(this.element);
    const room = roomHeight(style);
    this.room = { width, height: room ?? (this.canvas.clientHeight || FALLBACK_HEIGHT) };
    let height = this.room.height;
    if (room !== null) {
      height = this.model === null ? room : canvasHeightFor(this.model.layout, this.room);
      const css = `${height}px`;
      if (this.canvas.style.height !== css) {
        this.canvas.style.height = css;
      }
    }
    this.element.dataset.canvasHeight = String(height);
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
    const transfer = transferColour(this.store.devices);
    const theme = {
      transfer,
      marked: style?.getPropertyValue(MARKED_VARIABLE).trim() || transfer,
    } as DagTheme;
    for (const key of Object.keys(THEME_DEFAULTS) as (keyof typeof THEME_DEFAULTS)[]) {
      const [variable, fallback] = THEME_DEFAULTS[key];
      theme[key] = style?.getPropertyValue(variable).trim() || fallback;
    }
    return theme;
  }

  private paint(): void {
    const start = now();
    const laidOut = this.measure();
    if (this.refolds(laidOut)) {
      this.chooseFolding(this.currentHierarchy(), this.user);
      this.invalidateModel();
    }
    const model = this.currentModel();
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
    const coloursStale = this.colours === null;
    const colours = this.currentColours(model);
    const dimmed = this.currentDimmed(model);
    const live = this.currentLive(model);
    const markedNodes = this.currentMarkedNodes();
    const markedOps = markedNodes.reduce((n, m) => n + m, 0);
    const marked = markedOps > 0 ? this.currentMarkedBoxes(model) : null;
    const theme = this.theme();
    const alerts = this.currentAlerts(model);
    const flow = this.currentFlow(model);
    // The key follows the colours and the marks drawn: the graph, failures, moved and live ops,
    // loops and branches not taken.
    const keyInputs = [colours, model, alerts, marked, live, flow];
    if (coloursStale || keyInputs.some((input, i) => input !== this.keyInputs[i])) {
      this.keyInputs = keyInputs;
      const used = marksUsed(model, { alerts, marked, live, flow });
      renderKey(this.key, this.state.get('colour'), colours, theme, used);
      this.element.dataset.marks = [...used].join(' ');
      // The details pane marks transfers in the canvas's colour.
      const root = this.element.closest<HTMLElement>('.placeviz-inspector') ?? this.element;
      root.style.setProperty('--placeviz-dag-transfer', theme.transfer);
    }
    const palette = devicePalette(this.store.devices);
    const boxOfNode = (id: number | null) => {
      const index = id === null ? -1 : this.store.nodeIndex(id);
      return index < 0 ? -1 : model.folded.boxOf[index];
    };
    const boxes = model.folded.boxes.length;
    let inView = 0;
    let labelsDrawn = 0;
    let labelOverlaps = 0;
    let unnamed: string[] = [];
    if (this.ctx !== null) {
      ({ inView, labelsDrawn, labelOverlaps, unnamed } = paintDag({
        ctx: this.ctx,
        model,
        nodes: this.store.nodes,
        viewport: this.viewport,
        devicePixelRatio: this.devicePixelRatio(),
        colours,
        deviceColour: (device) =>
          device === null ? UNPLACED_COLOUR : (palette.get(device)?.colour ?? UNPLACED_COLOUR),
        dimmed,
        live,
        alerts,
        marked,
        flow,
        hoveredBox: boxOfNode(this.state.get('hovered')),
        selectedBox: boxOfNode(this.state.get('selected')),
        theme,
      }));
    }
    const data = this.element.dataset;
    data.boxes = String(boxes);
    data.ops = String(this.store.nodes.length);
    data.visibleNodes = String(boxes);
    data.inView = String(inView);
    data.labelsDrawn = String(labelsDrawn);
    data.unnamed = unnamed.join(' | ');
    data.labelOverlaps = String(labelOverlaps);
    data.markedNodes = String(markedOps);
    data.markedBoxes = String(marked === null ? 0 : marked.reduce((n, m) => n + m, 0));
    // What a test (and a reader of the page) can check: each loop's scope and iterations shown,
    // and how many boxes a branch not taken left faint.
    data.loops = (this.flow?.loops ?? [])
      .map((loop) => `${loop.scope}=${loop.iterations ?? 'not run'}`)
      .join(' ');
    data.loopsOpened = String(flow?.loopContainers.filter(Boolean).length ?? 0);
    data.notRunBoxes = String(flow === null ? 0 : flow.notRun.reduce((n, m) => n + m, 0));
    data.matching = String(dimmed === null ? boxes : dimmed.reduce((n, d) => n + (d ? 0 : 1), 0));
    const info = { drawn: boxes, ops: this.store.nodes.length, ms: now() - start };
    for (const listener of [...this.paintListeners]) {
      listener(info);
    }
  }
}
