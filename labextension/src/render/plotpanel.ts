/**
 * What the memory and timing panels share: their element and title, a plot drawn by plotly
 * (loaded lazily), recomputation throttled while events stream in, redraws coalesced (a draw
 * asked for while one is in flight runs once after it), and disposal.
 */
import { element } from './dom';
import type { PlotlyTrace } from 'plotly.js-basic-dist-min';
import { loadPlotly, PLOT_CONFIG, type PlotlyModule } from './plotly';
import { Throttle, type PanelOptions } from './panel';
import type { NodeRecord } from './types';
import type { View, ViewChange } from './view';
import type { ViewState, ViewStateFields } from './viewstate';
import type { PlacementStore } from './store';

export abstract class PlotPanel implements View {
  readonly element: HTMLDivElement;
  protected readonly plot: HTMLDivElement;
  /** plotly, once it has drawn this panel. */
  protected plotted: PlotlyModule | null = null;
  protected disposed = false;
  /** The store's nodes by id, as of the last recomputation. */
  protected nodes = new Map<number, NodeRecord>();
  private drawing = false;
  private redraw = false;
  private readonly throttle: Throttle;
  private unlisten: () => void = () => undefined;
  private resizeObserver: ResizeObserver | null = null;
  private intersectionObserver: IntersectionObserver | null = null;
  private width = 0;
  /** Whether the panel is in the viewport: null until the browser says, true where it cannot. */
  private inView: boolean | null = typeof IntersectionObserver === 'function' ? null : true;
  /** The last draw happened out of view, where its text may have been measured as nothing. */
  private drawnOutOfView = false;

  protected constructor(
    parent: HTMLElement,
    protected readonly store: PlacementStore,
    protected readonly state: ViewState,
    protected readonly options: PanelOptions,
    kind: string,
    title: string,
  ) {
    const doc = parent.ownerDocument;
    this.element = element(doc, 'div', `placeviz-panel ${kind}`);
    this.element.append(element(doc, 'div', 'placeviz-panel-title', title));
    this.plot = element(doc, 'div', 'placeviz-plot');
    parent.appendChild(this.element);
    this.throttle = new Throttle(options.throttleMs ?? 250, () => this.refreshModel());
  }

  /** Subclasses call this once their own elements exist: follow the view state, then draw. */
  protected start(): void {
    this.unlisten = this.state.listen((changed) => this.onState(changed));
    // Follow the container's width: a notebook reopened lays its cells out after the plot was
    // drawn, and plotly's `responsive` only hears the window being resized.
    if (typeof ResizeObserver === 'function') {
      this.resizeObserver = new ResizeObserver((entries) => {
        const width = Math.round(entries[entries.length - 1].contentRect.width);
        if (width > 0 && width !== this.width) {
          this.width = width;
          this.onResize();
        }
      });
      this.resizeObserver.observe(this.element);
    }
    // A notebook skips laying out cells out of view (JupyterLab's content-visibility): plotly
    // measures their text as nothing, so margins and fitted titles come out wrong, and nothing
    // resizes when the cell comes into view. Draw again then.
    if (typeof IntersectionObserver === 'function') {
      this.intersectionObserver = new IntersectionObserver((entries) => {
        this.inView = entries[entries.length - 1].isIntersecting;
        if (this.inView && this.drawnOutOfView) {
          this.onResize();
        }
      });
      this.intersectionObserver.observe(this.element);
    }
    this.refreshModel();
  }

  /** The panel's width changed: draw again at the new width. */
  protected onResize(): void {
    if (this.plotted && !this.disposed) {
      void Promise.resolve(this.plotted.Plots?.resize(this.plot)).then(() => this.draw());
    }
  }

  /** The store changed: recompute (throttled) and redraw; the run in flight is not plotted. */
  update(change: ViewChange): void {
    if (!this.disposed && (change.tables || change.events)) {
      this.throttle.call();
    }
  }

  /** Draw again with the current theme colours (JupyterLab switched theme). */
  refresh(): void {
    if (!this.disposed) {
      void this.draw();
    }
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    this.throttle.cancel();
    this.resizeObserver?.disconnect();
    this.intersectionObserver?.disconnect();
    this.unlisten();
    this.plotted?.purge(this.plot);
    this.element.remove();
  }

  /** Rebuild the panel's model and text from the store. */
  protected abstract recompute(): void;
  protected abstract onState(changed: ReadonlySet<keyof ViewStateFields>): void;
  /** Whether there is anything to plot (an empty panel that never plotted stays empty). */
  protected abstract hasData(): boolean;
  /** `plotly.react` the plot with the current model. */
  protected abstract react(plotly: PlotlyModule): Promise<void>;

  /**
   * `plotly.react` with the plot element as tall as the layout: plotly sizes a plot first drawn
   * while hidden (a notebook's cell out of view) to 100% of its element, which has no height of
   * its own, so the plot would overflow onto the text below it once the page is resized.
   */
  protected async plotWith(
    plotly: PlotlyModule,
    traces: PlotlyTrace[],
    layout: { height: number } & Record<string, unknown>,
  ): Promise<void> {
    this.plot.style.height = `${layout.height}px`;
    await plotly.react(this.plot, traces, layout, PLOT_CONFIG);
  }
  /** Where a failure to plot is said. */
  protected abstract readonly messageLine: HTMLElement;

  private refreshModel(): void {
    if (this.disposed) {
      return;
    }
    this.nodes = new Map(this.store.nodes.map((n) => [n.id, n]));
    this.recompute();
    void this.draw();
  }

  protected async draw(): Promise<void> {
    if (this.drawing) {
      this.redraw = true;
      return;
    }
    if (!this.hasData() && !this.plotted) {
      return;
    }
    this.drawing = true;
    try {
      const plotly = await loadPlotly();
      if (this.disposed) {
        return;
      }
      this.drawnOutOfView = this.inView !== true;
      await this.react(plotly);
      this.plotted = plotly;
    } catch (error) {
      this.messageLine.textContent = `Plot unavailable: ${String(error)}`;
    } finally {
      this.drawing = false;
      if (this.redraw && !this.disposed) {
        this.redraw = false;
        void this.draw();
      }
    }
  }
}
