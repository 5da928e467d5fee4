// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { setPlotlyLoader } from '../render/plotly';
import { smallDocument } from '../render/__tests__/fixtures';
import { markLiveView } from './live';
import { comparisonDocument } from '../render/__tests__/compare-fixture';
import extension, {
  COMPARE_MIME_TYPE,
  MIME_TYPE,
  PlacementRenderer,
  rendererFactory,
} from './mime';

function mimeModel(
  data: unknown,
  metadata: object = {},
  mimeType: string = MIME_TYPE,
): IRenderMime.IMimeModel {
  return {
    trusted: false,
    data: { [mimeType]: data } as IRenderMime.IMimeModel['data'],
    metadata: metadata as IRenderMime.IMimeModel['metadata'],
    setData: () => undefined,
  };
}

beforeEach(() => {
  setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
  // jsdom has no canvas: the DAG view copes, but jsdom reports it on the console.
  vi.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => setPlotlyLoader(null));

describe('the MIME extension', () => {
  it('is a safe, preferred renderer for placeviz documents, read as JSON', () => {
    expect(extension.id).toBe('placeviz:mime');
    expect(extension.dataType).toBe('json');
    expect(rendererFactory.safe).toBe(true);
    expect(rendererFactory.mimeTypes).toEqual([
      'application/vnd.placeviz+json',
      'application/vnd.placeviz.compare+json',
    ]);
    expect(COMPARE_MIME_TYPE).toBe('application/vnd.placeviz.compare+json');
    expect(rendererFactory.defaultRank).toBe(0);
  });
});

describe('PlacementRenderer', () => {
  it('renders an inspector root with the data- attributes of the contract', async () => {
    const renderer = new PlacementRenderer();
    await renderer.renderModel(mimeModel(smallDocument()));
    const root = renderer.node.querySelector<HTMLElement>('.placeviz-inspector')!;
    expect(root).not.toBeNull();
    expect(root.dataset).toMatchObject({
      ops: '3',
      devices: '3',
      events: '7',
      runs: '2',
      schema: 'placeviz/1',
    });
    expect(root.querySelectorAll('.placeviz-legend-entry').length).toBe(3);
    expect(root.querySelector('canvas.placeviz-dag')).not.toBeNull();
    expect(root.querySelector('.placeviz-memory')).not.toBeNull();
    expect(root.querySelector('.placeviz-timing')!.getAttribute('data-bars')).toBe('5');
    expect(root.querySelector('input[type=range].placeviz-time')).not.toBeNull();
    expect(root.querySelector('button.placeviz-play')).not.toBeNull();
    expect(root.querySelector('.placeviz-runs')!.textContent).toBe(
      'run 2 of 2 · error · step 100 ns (measured) · wall clock 100 ns',
    );
    expect(root.querySelector('.placeviz-error')!.textContent).toContain("node 'tower_0/b'");
    renderer.dispose();
  });

  it('accepts the document as JSON text and re-renders on a new model', async () => {
    const renderer = new PlacementRenderer();
    await renderer.renderModel(mimeModel(JSON.stringify(smallDocument())));
    expect(renderer.node.querySelectorAll('.placeviz-inspector').length).toBe(1);
    const doc = smallDocument();
    doc.runs = doc.runs.slice(0, 1);
    await renderer.renderModel(mimeModel(doc));
    const roots = renderer.node.querySelectorAll<HTMLElement>('.placeviz-inspector');
    expect(roots.length).toBe(1);
    expect(roots[0].dataset.runs).toBe('1');
    renderer.dispose();
  });

  it('shows a text error for a document it cannot read', async () => {
    const renderer = new PlacementRenderer();
    await renderer.renderModel(mimeModel('{"devices": <script>alert(1)</script>'));
    expect(renderer.node.querySelector('.placeviz-inspector')).toBeNull();
    const error = renderer.node.querySelector('.placeviz-error')!;
    expect(error.textContent).toMatch(/^placeviz: cannot show this placement document/);
    expect(renderer.node.querySelector('script')).toBeNull();
    await renderer.renderModel(mimeModel({ devices: 'nope', nodes: [] }));
    expect(renderer.node.querySelector('.placeviz-error')!.textContent).toContain('devices');
    await renderer.renderModel(mimeModel(null));
    expect(renderer.node.querySelector('.placeviz-error')).not.toBeNull();
  });

  it("shows a saved copy of a live widget's document only while that widget is not shown", async () => {
    const saved = { [MIME_TYPE]: { live_model: 'model-1' } };
    const renderer = new PlacementRenderer();
    document.body.appendChild(renderer.node);
    const view = document.body.appendChild(document.createElement('div'));
    markLiveView(view, 'model-1');
    await renderer.renderModel(mimeModel(smallDocument(), saved));
    expect(renderer.node.childElementCount).toBe(0); // the live view above shows the same runs
    markLiveView(view, 'model-2'); // another cell's widget
    await renderer.renderModel(mimeModel(smallDocument(), saved));
    expect(renderer.node.querySelector('.placeviz-inspector')).not.toBeNull();
    view.remove(); // a notebook opened after its kernel died: no view, the copy is shown
    markLiveView(view, 'model-1');
    await renderer.renderModel(mimeModel(smallDocument(), saved));
    expect(renderer.node.querySelector('.placeviz-inspector')).not.toBeNull();
    renderer.dispose();
    document.body.replaceChildren();
  });

  it('renders a comparison document as two inspectors under a summary', async () => {
    const renderer = rendererFactory.createRenderer({
      mimeType: COMPARE_MIME_TYPE,
    } as IRenderMime.IRendererOptions) as PlacementRenderer;
    await renderer.renderModel(mimeModel(comparisonDocument(), {}, COMPARE_MIME_TYPE));
    const root = renderer.node.querySelector<HTMLElement>('.placeviz-compare')!;
    expect(root.dataset.schema).toBe('placeviz-compare/1');
    expect(root.querySelector('.placeviz-compare-step')!.textContent).toMatch(/^step: simple/);
    expect(root.querySelectorAll('.placeviz-compare-column .placeviz-inspector')).toHaveLength(2);
    // Re-rendered from JSON text: one comparison, the first one's inspectors gone.
    await renderer.renderModel(
      mimeModel(JSON.stringify(comparisonDocument()), {}, COMPARE_MIME_TYPE),
    );
    expect(renderer.node.querySelectorAll('.placeviz-compare')).toHaveLength(1);
    expect(renderer.node.querySelectorAll('.placeviz-inspector')).toHaveLength(2);
    renderer.dispose();
  });

  it('shows one line of text for a comparison it cannot read', async () => {
    const renderer = new PlacementRenderer(COMPARE_MIME_TYPE);
    for (const data of [
      '{"documents": <script>alert(1)</script>',
      { ...comparisonDocument(), documents: [] },
      smallDocument(), // a placement document is not a comparison
    ]) {
      await renderer.renderModel(mimeModel(data, {}, COMPARE_MIME_TYPE));
      expect(renderer.node.querySelector('.placeviz-compare')).toBeNull();
      const errors = renderer.node.querySelectorAll('.placeviz-error');
      expect(errors).toHaveLength(1);
      expect(errors[0].textContent).toMatch(/^placeviz: cannot show this comparison: /);
      expect(errors[0].textContent).not.toContain('\n');
      expect(renderer.node.querySelector('script')).toBeNull();
    }
    renderer.dispose();
  });
});
