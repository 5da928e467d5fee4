/**
 * plotly.js, loaded once and only when a panel first needs it.
 *
 * In the lab extension the dynamic `import()` becomes a chunk of its own that rspack fetches from
 * the extension's static folder; in the standalone bundle esbuild inlines the module but evaluates
 * it only on the first call. Only SVG trace types (scatter) are used: a notebook may hold twenty
 * inspectors and browsers cap the number of WebGL contexts.
 */
import type { PlotlyStatic } from 'plotly.js-basic-dist-min';
import { visibleText } from './visible';

export type PlotlyModule = PlotlyStatic;
export type PlotlyLoader = () => Promise<PlotlyModule>;

/**
 * Resolves after the next frame has painted: evaluating plotly takes a few hundred ms, which
 * must not delay the DAG's first paint (data-first-paint-ms).
 */
function afterNextPaint(): Promise<void> {
  if (typeof requestAnimationFrame !== 'function') {
    return Promise.resolve();
  }
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

async function importPlotly(): Promise<PlotlyModule> {
  await afterNextPaint();
  const mod = (await import('plotly.js-basic-dist-min')) as unknown as {
    default?: PlotlyModule;
  } & Partial<PlotlyModule>;
  const plotly = (mod.default ?? mod) as PlotlyModule;
  if (typeof plotly.newPlot !== 'function') {
    throw new Error('plotly.js did not load');
  }
  return plotly;
}

let loader: PlotlyLoader = importPlotly;
let pending: Promise<PlotlyModule> | null = null;

/** plotly.js; the first call starts loading it, later calls share that promise. */
export function loadPlotly(): Promise<PlotlyModule> {
  if (pending === null) {
    pending = loader();
    // A failed load (no canvas in a test DOM, a blocked chunk) may be retried by a later panel.
    pending.catch(() => {
      pending = null;
    });
  }
  return pending;
}

/** Replace the loader (tests; a page that already has plotly). Clears the memoised module. */
export function setPlotlyLoader(next: PlotlyLoader | null): void {
  loader = next ?? importPlotly;
  pending = null;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * Text from the document made safe for plotly, which parses hover labels, titles and legend
 * entries as a small HTML subset (`<b>`, `<br>`, `<a href>`, ...). Every op name, type or device
 * string handed to plotly goes through this.
 */
export function escapePlotlyText(text: unknown): string {
  return visibleText(text).replace(/[&<>]/g, (ch) => ESCAPES[ch]);
}

/** Theme colours for plots, read from the inspector's CSS variables (light fallbacks). */
export interface PlotTheme {
  font: string;
  fontColor: string;
  grid: string;
  background: string;
  cursor: string;
}

export function plotTheme(element: Element): PlotTheme {
  const style = typeof getComputedStyle === 'function' ? getComputedStyle(element) : null;
  const read = (name: string, fallback: string): string => {
    const value = style?.getPropertyValue(name).trim();
    return value ? value : fallback;
  };
  // The inspector root defines --placeviz-* from JupyterLab's --jp-* variables (with fallbacks
  // for the standalone page), so plots follow the light and dark themes.
  return {
    font: read('--placeviz-font', 'system-ui, -apple-system, "Segoe UI", sans-serif'),
    fontColor: read('--placeviz-fg', '#212121'),
    grid: read('--placeviz-border', '#e0e0e0'),
    background: 'rgba(0,0,0,0)',
    cursor: read('--placeviz-accent', '#1976d2'),
  };
}

/** The plotly config every panel uses: no logo or cloud links, no mode bar, responsive. */
export const PLOT_CONFIG: Record<string, unknown> = {
  displaylogo: false,
  displayModeBar: false,
  responsive: true,
  showLink: false,
  showSendToCloud: false,
  showEditInChartStudio: false,
  scrollZoom: false,
};
