// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setPlotlyLoader } from '../render/plotly';
import { smallDocument } from '../render/__tests__/fixtures';

beforeEach(() => {
  setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
  document.body.replaceChildren();
});
afterEach(() => setPlotlyLoader(null));

function documentScript(text: string): HTMLScriptElement {
  const script = document.createElement('script');
  script.type = 'application/vnd.placeviz+json';
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

  it('exposes window.placeviz.render for other pages', async () => {
    await import('./standalone');
    const target = document.createElement('div');
    document.body.appendChild(target);
    const inspector = window.placeviz!.render(target, smallDocument());
    expect(target.querySelector('.placeviz-inspector')).not.toBeNull();
    inspector!.dispose();
    expect(target.querySelector('.placeviz-inspector')).toBeNull();
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
});
