/**
 * The small part of plotly.js (the basic dist bundle: scatter, bar, pie; SVG only) that the
 * panels use. plotly.js-basic-dist-min ships no typings.
 */
declare module 'plotly.js-basic-dist-min' {
  export type PlotlyDatum = number | string | null;

  export interface PlotlyTrace {
    type?: 'scatter' | 'bar';
    mode?: string;
    name?: string;
    x?: ArrayLike<PlotlyDatum>;
    y?: ArrayLike<PlotlyDatum>;
    text?: string | ArrayLike<string>;
    customdata?: ArrayLike<unknown>;
    hoverinfo?: string;
    hovertemplate?: string;
    line?: Record<string, unknown>;
    marker?: Record<string, unknown>;
    connectgaps?: boolean;
    showlegend?: boolean;
    legendgroup?: string;
    [key: string]: unknown;
  }

  export interface PlotlyHoverPoint {
    curveNumber: number;
    pointNumber: number;
    pointIndex?: number;
    x: PlotlyDatum;
    y: PlotlyDatum;
    customdata?: unknown;
    data?: PlotlyTrace;
  }

  export interface PlotlyHoverEvent {
    points: PlotlyHoverPoint[];
    xvals?: number[];
    event?: MouseEvent;
  }

  export interface PlotlyHTMLElement extends HTMLElement {
    on(event: string, callback: (event: PlotlyHoverEvent & Record<string, unknown>) => void): void;
    removeAllListeners?(event?: string): void;
  }

  export interface PlotlyStatic {
    newPlot(
      root: HTMLElement,
      data: PlotlyTrace[],
      layout?: Record<string, unknown>,
      config?: Record<string, unknown>,
    ): Promise<PlotlyHTMLElement>;
    react(
      root: HTMLElement,
      data: PlotlyTrace[],
      layout?: Record<string, unknown>,
      config?: Record<string, unknown>,
    ): Promise<PlotlyHTMLElement>;
    relayout(root: HTMLElement, update: Record<string, unknown>): Promise<PlotlyHTMLElement>;
    restyle(
      root: HTMLElement,
      update: Record<string, unknown>,
      traces?: number | number[],
    ): Promise<PlotlyHTMLElement>;
    purge(root: HTMLElement): void;
    Plots?: { resize(root: HTMLElement): Promise<void> | void };
  }

  const Plotly: PlotlyStatic;
  export default Plotly;
}
