/**
 * The DAG view's drawing: one 2D canvas (not WebGL: a notebook may hold many inspectors, and
 * browsers cap WebGL contexts) sized to the room the page gives it, the theme read from CSS
 * variables, the colour key, and one frame painted from what the view derived (dagpaint.ts). Each
 * frame leaves what it drew on the view's element as data attributes (see dag.ts).
 */
import { UNPLACED_COLOUR, devicePalette, transferColour } from './colours';
import { element } from './dom';
import type { BoxColours } from './dagcolour';
import type { ControlFlowRun } from './controlflow';
import type { FlowMarks } from './dagflow';
import type { CanvasSize } from './dagfold';
import { renderKey } from './dagkey';
import { marksUsed } from './dagmarks';
import type { DagModel } from './dagmodel';
import { paintDag, type DagTheme } from './dagpaint';
import { canvasHeightFor, roomHeight } from './dagsize';
import type { PlacementStore } from './store';
import { Viewport } from './viewport';
import type { ViewState } from './viewstate';

/** Canvas size when the page has not laid it out (a hidden output, or jsdom). */
const FALLBACK_WIDTH = 640;
const FALLBACK_HEIGHT = 380;

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

/** What one frame draws: the model and, per box, what the view derived for it. */
export interface Frame {
  model: DagModel;
  colours: BoxColours;
  /** Whether the colours were derived anew for this frame (the key is drawn again). */
  coloursFresh: boolean;
  dimmed: Uint8Array | null;
  live: Uint8Array | null;
  /** Ops the comparison marked, and per box whether it holds one (null: none marked). */
  markedOps: number;
  marked: Uint8Array | null;
  alerts: Uint8Array;
  flow: FlowMarks | null;
  /** The run shown's loops, named in data-loops. */
  flowRun: ControlFlowRun | null;
}

export class DagCanvas {
  readonly canvas: HTMLCanvasElement;
  readonly viewport = new Viewport();
  /** The canvas's room: its width and the largest height the page gives it (measure). */
  room: CanvasSize = { width: FALLBACK_WIDTH, height: FALLBACK_HEIGHT };
  private readonly ctx: CanvasRenderingContext2D | null;
  /** What the key was last drawn from (the colours, model, alerts, marked and live boxes). */
  private keyInputs: unknown[] = [];

  constructor(
    /** The view's element: its style gives the room and the theme, its dataset takes the counts. */
    private readonly host: HTMLElement,
    private readonly key: HTMLElement,
    private readonly store: PlacementStore,
    private readonly state: ViewState,
  ) {
    this.canvas = element(host.ownerDocument, 'canvas', 'placeviz-dag');
    // Focusable: the wheel zooms the graph once it has focus (a click), else scrolls the page.
    this.canvas.tabIndex = 0;
    this.canvas.setAttribute('aria-label', 'op graph: click to focus, then wheel to zoom');
    this.ctx = this.canvas.getContext('2d');
  }

  /**
   * The canvas's room (its width, and the height the page gives the graph: --placeviz-dag-room,
   * else the canvas's laid-out height) and its height: where the page gives a room, as tall as
   * `world` (the current graph, null before one is laid out) fitted to it needs (dagsize.ts), else
   * the room's. Sizes the canvas and its backing store (CSS size times the device pixel ratio);
   * returns whether the page has laid the canvas out (a hidden output has no size yet).
   */
  measure(world: { width: number; height: number } | null): boolean {
    const dpr = this.devicePixelRatio();
    const laidOut = this.canvas.clientWidth > 0 && this.canvas.clientHeight > 0;
    const width = this.canvas.clientWidth || FALLBACK_WIDTH;
    const style = this.host.ownerDocument.defaultView?.getComputedStyle(this.host);
    const room = roomHeight(style);
    this.room = { width, height: room ?? (this.canvas.clientHeight || FALLBACK_HEIGHT) };
    let height = this.room.height;
    if (room !== null) {
      height = world === null ? room : canvasHeightFor(world, this.room);
      const css = `${height}px`;
      if (this.canvas.style.height !== css) {
        this.canvas.style.height = css;
      }
    }
    this.host.dataset.canvasHeight = String(height);
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
    return this.host.ownerDocument.defaultView?.devicePixelRatio || 1;
  }

  private theme(): DagTheme {
    const style = this.host.ownerDocument.defaultView?.getComputedStyle(this.host);
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

  /** Paint `frame` at the viewport, the key where what it shows changed, and the counts. */
  draw(frame: Frame): void {
    const { model, colours, dimmed, live, marked, alerts, flow } = frame;
    const theme = this.theme();
    // The key follows the colours and the marks drawn: the graph, failures, moved and live ops,
    // loops and branches not taken.
    const keyInputs = [colours, model, alerts, marked, live, flow];
    if (frame.coloursFresh || keyInputs.some((input, i) => input !== this.keyInputs[i])) {
      this.keyInputs = keyInputs;
      const used = marksUsed(model, { alerts, marked, live, flow });
      renderKey(this.key, this.state.get('colour'), colours, theme, used);
      this.host.dataset.marks = [...used].join(' ');
      // The details pane marks transfers in the canvas's colour.
      const root = this.host.closest<HTMLElement>('.placeviz-inspector') ?? this.host;
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
    const data = this.host.dataset;
    data.boxes = String(boxes);
    data.ops = String(this.store.nodes.length);
    data.visibleNodes = String(boxes);
    data.inView = String(inView);
    data.labelsDrawn = String(labelsDrawn);
    data.unnamed = unnamed.join(' | ');
    data.labelOverlaps = String(labelOverlaps);
    data.markedNodes = String(frame.markedOps);
    data.markedBoxes = String(marked === null ? 0 : marked.reduce((n, m) => n + m, 0));
    // What a test (and a reader of the page) can check: each loop's scope and iterations shown,
    // and how many boxes a branch not taken left faint.
    data.loops = (frame.flowRun?.loops ?? [])
      .map((loop) => `${loop.scope}=${loop.iterations ?? 'not run'}`)
      .join(' ');
    data.loopsOpened = String(flow?.loopContainers.filter(Boolean).length ?? 0);
    data.notRunBoxes = String(flow === null ? 0 : flow.notRun.reduce((n, m) => n + m, 0));
    data.matching = String(dimmed === null ? boxes : dimmed.reduce((n, d) => n + (d ? 0 : 1), 0));
  }
}
