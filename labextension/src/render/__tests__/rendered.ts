/**
 * Inspectors rendered in jsdom from whole documents: the golden documents Python writes, a fake
 * canvas that keeps the texts drawn, no plotly, and every inspector disposed after its test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, vi } from 'vitest';
import { createInspector, type Inspector } from '../inspector';
import { setPlotlyLoader } from '../plotly';
import { PlacementStore } from '../store';
import type { PlacementDocument } from '../types';
import { fakeContext, useContext } from './canvas';

/** A golden document (scripts/write_golden_documents.py writes them). */
export function golden(name: string): PlacementDocument {
  const path = join(__dirname, 'golden', `${name}.json`);
  return JSON.parse(readFileSync(path, 'utf-8')) as PlacementDocument;
}

/** Two animation frames' worth of waiting, for a render to settle. */
export const frames = () => new Promise((resolve) => setTimeout(resolve, 80));

/**
 * Registers the hooks of a suite that renders inspectors; `render` draws one into the page and
 * waits for it, `texts()` is what the fake canvas drew in the current test.
 */
export function renderedInspectors(): {
  render: (doc: PlacementDocument) => Promise<Inspector>;
  texts: () => string[];
} {
  let open: Inspector[] = [];
  let drawn: string[] = [];
  beforeEach(() => {
    const fake = fakeContext();
    drawn = fake.texts;
    useContext(fake.ctx);
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    open.forEach((inspector) => inspector.dispose());
    open = [];
    setPlotlyLoader(null);
  });
  return {
    render: async (doc) => {
      const host = document.createElement('div');
      document.body.appendChild(host);
      const inspector = createInspector(host, PlacementStore.fromDocument(doc));
      open.push(inspector);
      await frames();
      return inspector;
    },
    texts: () => drawn,
  };
}
