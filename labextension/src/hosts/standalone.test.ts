// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setPlotlyLoader } from '../render/plotly';
import { smallDocument } from '../render/__tests__/fixtures';
import { comparisonDocument } from '../render/__tests__/compare-fixture';
import { COLUMN_NAMES } from '../render/types';

beforeEach(() => {
  setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
  document.body.replaceChildren();
});
afterEach(() => setPlotlyLoader(null));

function documentScript(text: string, type = 'application/vnd.placeviz+json'): HTMLScriptElement {
  const script = document.createElement('script');
  script.type = type;
  script.id = 'placeviz-document';
  script.textContent = text;
  document.body.appendChild(script);
  return script;
}

describe('the standalone bundle', () => {
  it('renders each document script into a div after it, once', async () => {
    const script = documentScript(JSON.stringify(smallDocument()).replace(/</g, '\\u003c'));
    const { renderAll } = await import('./standalone');
    // Importing rendered the page already (the document had loaded).
    const container = script.nextElementSibling as HTMLElement;
    expect(container.tagName).toBe('DIV');
    const root = container.querySelector<HTMLElement>('.placeviz-inspector')!;
    expect(root.dataset.ops).toBe('3');
    expect(root.dataset.schema).toBe('placeviz/1');
    expect(renderAll()).toEqual([]);
    expect(document.querySelectorAll('.placeviz-inspector').length).toBe(1);
  });

  it('replaces the waiting note a notebook output puts after its document', async () => {
    const { renderAll } = await import('./standalone');
    const script = documentScript(JSON.stringify(smallDocument()));
    const note = document.createElement('div');
    note.className = 'placeviz-waiting';
    script.after(note);
    renderAll();
    expect(document.querySelector('.placeviz-waiting')).toBeNull();
    expect(script.nextElementSibling?.querySelector('.placeviz-inspector')).not.toBeNull();
  });

  it('exposes window.placeviz.render for other pages', async () => {
    await import('./standalone');
    const target = document.createElement('div');
    document.body.appendChild(target);
    const inspector = window.placeviz!.render(target, smallDocument());
    expect(target.querySelector('.placeviz-inspector')).not.toBeNull();
    inspector!.dispose();
    expect(target.querySelector('.placeviz-inspector')).toBeNull();
  });

  it('applies live messages with window.placeviz.renderLive, decoded as the widget does', async () => {
    await import('./standalone');
    const target = document.createElement('div');
    document.body.appendChild(target);
    const live = window.placeviz!.renderLive(target, smallDocument());
    const root = target.querySelector<HTMLElement>('.placeviz-inspector')!;
    const count = 3;
    const columns: Record<string, ArrayBufferView> = {
      kind: new Int8Array(count).fill(2),
      t0: Float64Array.from([400, 410, 420]),
      t1: Float64Array.from([405, 415, 425]),
      node: new Int32Array(count),
      device: new Int16Array(count).fill(1),
      stream: new Int16Array(count),
      bytes: new Float64Array(count),
      source: new Int8Array(count).fill(1),
      run: new Int32Array(count).fill(2),
      peer: new Int16Array(count).fill(-1),
      frame: new Int32Array(count).fill(-1),
      iteration: new Int32Array(count).fill(-1),
    };
    live.apply(
      { kind: 'update', count, runs: [{ id: 2, t0: 1400, t1: 1430, status: 'ok' }] },
      COLUMN_NAMES.map((name) => new DataView(columns[name].buffer)),
    );
    await new Promise((resolve) => requestAnimationFrame(() => resolve(null)));
    expect(root.dataset.events).toBe(String(7 + count));
    expect(root.dataset.runs).toBe('3');
    expect(() => live.apply({ kind: 'update', count: 2 }, [])).toThrow(
      new RegExp(`expected ${COLUMN_NAMES.length} buffers`),
    );
    live.inspector.dispose();
  });

  it('shows garbage as a text error', async () => {
    const { renderAll } = await import('./standalone');
    const script = documentScript('not json <b>x</b>');
    renderAll();
    const container = script.nextElementSibling as HTMLElement;
    expect(container.querySelector('.placeviz-inspector')).toBeNull();
    expect(container.textContent).toMatch(/^placeviz: cannot show this placement document/);
    expect(container.querySelector('b')).toBeNull();
  });

  it('renders a comparison script as a comparison, and exposes renderComparison', async () => {
    const { renderAll } = await import('./standalone');
    const type = 'application/vnd.placeviz.compare+json';
    const script = documentScript(JSON.stringify(comparisonDocument()), type);
    renderAll();
    const container = script.nextElementSibling as HTMLElement;
    expect(container.querySelector('.placeviz-compare')).not.toBeNull();
    expect(container.querySelectorAll('.placeviz-inspector')).toHaveLength(2);
    const target = document.body.appendChild(document.createElement('div'));
    expect(window.placeviz!.renderComparison(target, '{"schema": "x"')).toBeNull();
    expect(target.textContent).toMatch(/^placeviz: cannot show this comparison/);
  });
});
