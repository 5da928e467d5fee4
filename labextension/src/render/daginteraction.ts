/**
 * The DAG view's interaction: the toolbar (search on Enter, the fit button, the colour select),
 * the wheel (zoom, once the canvas has focus or with Ctrl), dragging (pan), clicks (select an op,
 * or a group's +/- control), double-clicks (open a folded group, fold an opened one) and hover (a
 * tooltip, the hovered op shared). It changes the view only through its host.
 */
import { element } from './dom';
import { CONTAINER_HEADER } from './boxmetrics';
import { containerLines, tooltipLines } from './dagtooltip';
import type { DagModel } from './dagmodel';
import { toggleRect } from './dagshapes';
import { findOp } from './search';
import type { PlacementStore } from './store';
import type { ColourMode } from './types';
import type { Viewport } from './viewport';
import type { ViewState } from './viewstate';

/** A press that moves less than this (px) is a click, not a drag. */
const CLICK_SLOP = 4;

/** What the interaction reads from and does to the view. */
export interface DagHost {
  readonly store: PlacementStore;
  readonly state: ViewState;
  readonly viewport: Viewport;
  /** The model as laid out now (laying it out if it is stale). */
  model(): DagModel;
  /** Per box, 1 when it holds a marked op, as last drawn. */
  markedBoxes(): Uint8Array | null;
  isExpanded(key: string): boolean;
  toggleGroup(key: string): void;
  focus(nodeId: number): void;
  fit(): void;
  /** The user panned or zoomed: no more fitting to the canvas. */
  movedByUser(): void;
  schedulePaint(): void;
}

/** The elements the interaction listens to and writes. */
export interface DagControls {
  element: HTMLElement;
  canvas: HTMLCanvasElement;
  tooltip: HTMLElement;
  search: HTMLInputElement;
  searchStatus: HTMLElement;
  fitButton: HTMLButtonElement;
  colourSelect: HTMLSelectElement;
}

export class DagInteraction {
  private readonly disposers: (() => void)[] = [];
  private hoverBox = -1;
  private press: { x: number; y: number; dragging: boolean } | null = null;

  constructor(
    private readonly controls: DagControls,
    private readonly host: DagHost,
  ) {
    const { element: root, canvas, search, fitButton, colourSelect } = controls;
    this.on(search, 'keydown', (event) => {
      if ((event as KeyboardEvent).key === 'Enter') {
        this.searchFor(search.value);
      }
    });
    this.on(fitButton, 'click', () => host.fit());
    this.on(colourSelect, 'change', () => {
      host.state.set({ colour: colourSelect.value as ColourMode });
    });
    this.on(canvas, 'wheel', (event) => this.onWheel(event as WheelEvent), { passive: false });
    this.on(canvas, 'mousedown', (event) => {
      canvas.focus({ preventScroll: true });
      this.onPress(event as MouseEvent);
    });
    this.on(canvas, 'mousemove', (event) => this.onMove(event as MouseEvent));
    this.on(canvas, 'mouseleave', () => this.hover(-1, null));
    this.on(canvas, 'dblclick', (event) => this.onDoubleClick(event as MouseEvent));
    const win = root.ownerDocument.defaultView;
    if (win) {
      this.on(win, 'mouseup', (event) => this.onRelease(event as MouseEvent));
      this.on(win, 'mousemove', (event) => this.onDrag(event as MouseEvent));
    }
  }

  /** Remove every listener; safe to call twice. */
  dispose(): void {
    for (const dispose of this.disposers.splice(0)) {
      dispose();
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

  /** The boxes changed: nothing is hovered (without telling the shared state). */
  forgetHover(): void {
    this.hoverBox = -1;
    this.controls.tooltip.hidden = true;
  }

  /** Enter in the search box: filter by the text and centre the first match. */
  private searchFor(text: string): void {
    this.host.state.set({ filter: text.trim() });
    const found = findOp(this.host.store, text);
    if (found !== null) {
      this.host.focus(found);
    }
  }

  /** "no op matches" when the filter leaves nothing, else the number of matching ops. */
  showMatches(matches: Uint8Array | null): void {
    const status = this.controls.searchStatus;
    const filter = this.host.state.get('filter');
    if (matches === null) {
      status.textContent = '';
      status.classList.remove('placeviz-search-none');
      return;
    }
    const hits = matches.reduce((n, m) => n + m, 0);
    status.textContent =
      hits === 0
        ? `no op matches “${filter}”`
        : hits === 1
          ? '1 op matches'
          : `${hits.toLocaleString('en-US')} ops match`;
    status.classList.toggle('placeviz-search-none', hits === 0);
  }

  private pointer(event: MouseEvent): { x: number; y: number } {
    const rect = this.controls.canvas.getBoundingClientRect();
    return { x: event.clientX - rect.left, y: event.clientY - rect.top };
  }

  private boxAt(event: MouseEvent): number {
    const { x, y } = this.pointer(event);
    const { viewport } = this.host;
    return this.host.model().grid.hitTest(viewport.toWorldX(x), viewport.toWorldY(y));
  }

  /**
   * The group whose +/- control is under the pointer (a folded box's or a container's), or the
   * container whose title strip is; null when none is.
   */
  private toggleAt(event: MouseEvent, titleToo: boolean): string | null {
    const model = this.host.model();
    const { x: px, y: py } = this.pointer(event);
    const wx = this.host.viewport.toWorldX(px);
    const wy = this.host.viewport.toWorldY(py);
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
    const { element: root, canvas } = this.controls;
    const focused = root.ownerDocument.activeElement === canvas;
    if (!focused && !event.ctrlKey) {
      return; // the page scrolls on
    }
    event.preventDefault();
    const lines = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? 400 : 1;
    const { x, y } = this.pointer(event);
    this.host.movedByUser();
    this.host.viewport.zoomAt(x, y, Math.exp(-event.deltaY * lines * 0.0015));
    this.host.schedulePaint();
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
    this.host.movedByUser();
    this.host.viewport.panBy(dx, dy);
    this.hover(-1, null);
    this.host.schedulePaint();
  }

  private onRelease(event: MouseEvent): void {
    const press = this.press;
    this.press = null;
    if (press === null || press.dragging || event.target !== this.controls.canvas) {
      return;
    }
    const toggled = this.toggleAt(event, false);
    if (toggled !== null) {
      this.host.toggleGroup(toggled);
      return;
    }
    const box = this.boxAt(event);
    const node = box < 0 ? -1 : this.host.model().folded.boxes[box].node;
    if (node >= 0) {
      this.host.state.set({ selected: this.host.store.nodes[node].id });
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
    const { containers } = this.host.model().layout;
    const { x: px, y: py } = this.pointer(event);
    const wx = this.host.viewport.toWorldX(px);
    const wy = this.host.viewport.toWorldY(py);
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
    const model = this.host.model();
    const box = this.boxAt(event);
    if (box < 0) {
      const title = this.toggleAt(event, true);
      if (title !== null && this.host.isExpanded(title)) {
        this.host.toggleGroup(title);
      }
      return;
    }
    const record = model.folded.boxes[box];
    if (record.group >= 0) {
      this.host.toggleGroup(model.hierarchy.groups[record.group].key);
      return;
    }
    const container = model.folded.boxParent[box];
    if (container >= 0) {
      this.host.toggleGroup(model.hierarchy.groups[model.folded.containers[container].group].key);
    }
  }

  /** Hover `target`: a box index, -2 - c for container c's title, -1 for nothing. */
  hover(target: number, event: MouseEvent | null): void {
    const model = this.host.model();
    const { element: root, tooltip } = this.controls;
    const node = target < 0 ? -1 : model.folded.boxes[target].node;
    if (target !== this.hoverBox) {
      this.hoverBox = target;
      this.host.state.set({ hovered: node < 0 ? null : this.host.store.nodes[node].id });
      const doc = root.ownerDocument;
      const lines =
        target >= 0
          ? tooltipLines(this.host.store, model, target)
          : target <= -2
            ? containerLines(model, -2 - target)
            : [];
      if (target >= 0 && this.host.markedBoxes()?.[target] === 1) {
        lines.push(
          node >= 0
            ? 'moved: the other placement puts it elsewhere'
            : 'holds ops the other placement moved',
        );
      }
      tooltip.replaceChildren(
        ...lines.map((text, i) =>
          element(doc, 'div', i === 0 ? 'placeviz-tooltip-title' : 'placeviz-tooltip-line', text),
        ),
      );
      tooltip.hidden = target === -1;
    }
    if (target !== -1 && event !== null) {
      const rect = root.getBoundingClientRect();
      tooltip.style.left = `${event.clientX - rect.left + 14}px`;
      tooltip.style.top = `${event.clientY - rect.top + 14}px`;
    }
  }
}
