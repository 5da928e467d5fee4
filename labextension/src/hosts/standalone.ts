/**
 * The standalone host: one script inlined into an HTML page by `Trace.to_html` (no network, no
 * Jupyter), or carried by a notebook output's `text/html` (VS Code, Colab, nbconvert exports). On
 * load it renders each `<script type="application/vnd.placeviz+json">` into a new div inserted
 * after it (replacing the `.placeviz-waiting` note an output puts there), and
 * `window.placeviz.render(element, document)` renders on demand. A
 * `<script type="application/vnd.placeviz.compare+json">` (two placements: compare.ts) is rendered
 * the same way, as a comparison (`window.placeviz.renderComparison`).
 */
import { COMPARE_MIME_TYPE, createComparison, type ComparisonView } from '../render/compare';
import { documentError } from '../render/dom';
import { createInspector, type Inspector } from '../render/inspector';
import { applyMessage, type BufferLike, type LiveMessage } from '../render/live';
import { PlacementStore } from '../render/store';

export const MIME_TYPE = 'application/vnd.placeviz+json';
const STYLE_ID = 'placeviz-style';

/** The stylesheet (style/index.css with its imports), inlined by scripts/build-standalone.mjs. */
const CSS: string = typeof __PLACEVIZ_CSS__ === 'string' ? __PLACEVIZ_CSS__ : '';

function ensureStyle(doc: Document): void {
  if (CSS === '' || doc.getElementById(STYLE_ID)) {
    return;
  }
  const style = doc.createElement('style');
  style.id = STYLE_ID;
  style.textContent = CSS;
  (doc.head ?? doc.documentElement).appendChild(style);
}

/** Render a placement document (object or JSON text) into `element`; errors are shown as text. */
export function render(element: HTMLElement, doc: unknown): Inspector | null {
  const startedAt = performance.now();
  ensureStyle(element.ownerDocument);
  element.classList.add('placeviz-standalone');
  try {
    const data = typeof doc === 'string' ? JSON.parse(doc) : doc;
    return createInspector(element, PlacementStore.fromDocument(data), { startedAt });
  } catch (error) {
    element.appendChild(documentError(element.ownerDocument, error));
    return null;
  }
}

/** Render a comparison document (object or JSON text) into `element`; errors are shown as text. */
export function renderComparison(element: HTMLElement, doc: unknown): ComparisonView | null {
  const startedAt = performance.now();
  ensureStyle(element.ownerDocument);
  element.classList.add('placeviz-standalone');
  try {
    return createComparison(element, doc, { startedAt });
  } catch (error) {
    element.appendChild(documentError(element.ownerDocument, error, 'comparison'));
    return null;
  }
}

/** A live view on the standalone page: the inspector and how to hand it a kernel message. */
export interface LiveView {
  inspector: Inspector;
  /** Apply one live `update` message, decoded like the widget decodes it. */
  apply(content: LiveMessage, buffers: BufferLike[]): void;
}

/**
 * Render `doc` into `element` and return a handle that applies live messages to it, the way the
 * widget does: for pages that receive the kernel's updates themselves, and benchmarks.
 */
export function renderLive(element: HTMLElement, doc: unknown): LiveView {
  ensureStyle(element.ownerDocument);
  element.classList.add('placeviz-standalone');
  const data = typeof doc === 'string' ? JSON.parse(doc) : doc;
  const store = PlacementStore.fromDocument(data);
  const inspector = createInspector(element, store, { startedAt: performance.now() });
  return { inspector, apply: (content, buffers) => applyMessage(store, content, buffers) };
}

/** Render every document script of the page not rendered yet; returns the new containers. */
export function renderAll(doc: Document = document): HTMLElement[] {
  const created: HTMLElement[] = [];
  const scripts = doc.querySelectorAll<HTMLScriptElement>(
    `script[type="${MIME_TYPE}"], script[type="${COMPARE_MIME_TYPE}"]`,
  );
  scripts.forEach((script) => {
    if (script.dataset.placevizRendered === 'true') {
      return;
    }
    script.dataset.placevizRendered = 'true';
    // A notebook's HTML output says, until its script runs, what the inspector needs.
    const waiting = script.nextElementSibling;
    if (waiting?.classList.contains('placeviz-waiting')) {
      waiting.remove();
    }
    const container = doc.createElement('div');
    container.className = 'placeviz-container';
    script.after(container);
    created.push(container);
    if (script.type === COMPARE_MIME_TYPE) {
      renderComparison(container, script.textContent ?? '');
    } else {
      render(container, script.textContent ?? '');
    }
  });
  return created;
}

declare global {
  interface Window {
    placeviz?: {
      render: typeof render;
      renderComparison: typeof renderComparison;
      renderAll: typeof renderAll;
      renderLive: typeof renderLive;
    };
  }
}

if (typeof window !== 'undefined') {
  window.placeviz = { render, renderComparison, renderAll, renderLive };
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', () => renderAll(document));
  } else {
    renderAll(document);
  }
}
