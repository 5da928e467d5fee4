// @vitest-environment jsdom
import type * as nbformat from '@jupyterlab/nbformat';
import { describe, expect, it } from 'vitest';
import { smallDocument } from '../render/__tests__/fixtures';
import type { PlacementDocument } from '../render/types';
import { PlacementRenderer } from './mime';
import {
  documentBundle,
  rescuedOutputs,
  rescueOutputs,
  widgetModelOf,
  type Outputs,
} from './rescue';

const PLACEVIZ = 'application/vnd.placeviz+json';
const WIDGET = 'application/vnd.jupyter.widget-view+json';

function view(modelId: string, type: 'display_data' | 'execute_result' = 'display_data') {
  return {
    output_type: type,
    data: {
      [WIDGET]: { model_id: modelId, version_major: 2, version_minor: 0 },
      'text/plain': 'PlacementInspector()',
    },
    metadata: {},
    ...(type === 'execute_result' ? { execution_count: 4 } : {}),
  } as nbformat.IOutput;
}

/** The kernel's saved copy of a live model's document (placeviz/inspector/cell_output.py). */
function savedCopy(modelId: string): nbformat.IOutput {
  return {
    output_type: 'display_data',
    data: { [PLACEVIZ]: { schema: 'placeviz/1' }, 'text/plain': 'older' },
    metadata: { [PLACEVIZ]: { live_model: modelId } },
  };
}

const text: nbformat.IOutput = { output_type: 'stream', name: 'stdout', text: 'hello\n' };

/** Only model `live` is an inspector open on the page. */
function documentOf(modelId: string): PlacementDocument | null {
  return modelId === 'live' ? smallDocument() : null;
}

describe('widgetModelOf', () => {
  it('reads the model of a widget view output, and nothing else', () => {
    expect(widgetModelOf(view('m1'))).toBe('m1');
    expect(widgetModelOf(view('m2', 'execute_result'))).toBe('m2');
    expect(widgetModelOf(text)).toBeNull();
    expect(widgetModelOf(savedCopy('m1'))).toBeNull();
    expect(
      widgetModelOf({ output_type: 'display_data', data: { [WIDGET]: {} }, metadata: {} }),
    ).toBeNull();
  });
});

describe('rescuedOutputs', () => {
  it('replaces the view of an open inspector by its document and empties its saved copy', () => {
    const outputs = [text, view('live'), savedCopy('live')];
    const rewritten = rescuedOutputs(outputs, documentOf);
    expect([...rewritten.keys()].sort()).toEqual([1, 2]);
    const rescued = rewritten.get(1) as nbformat.IDisplayData;
    expect(rescued.output_type).toBe('display_data');
    expect(rescued.data[PLACEVIZ]).toEqual(smallDocument());
    expect(rescued.data[WIDGET]).toBeUndefined();
    expect(rescued.metadata).toEqual({});
    expect(rewritten.get(2)).toEqual({ output_type: 'display_data', data: {}, metadata: {} });
  });

  it('leaves other widgets, other models’ saved copies and text alone', () => {
    const outputs = [view('slider'), savedCopy('other'), text, savedCopy('slider')];
    expect(rescuedOutputs(outputs, documentOf).size).toBe(0);
  });

  it('keeps an execute result’s count', () => {
    const rescued = rescuedOutputs([view('live', 'execute_result')], documentOf).get(0);
    expect(rescued).toMatchObject({ output_type: 'execute_result', execution_count: 4 });
  });
});

describe('documentBundle', () => {
  it('is the document and a line of counts, which the MIME renderer draws', async () => {
    const bundle = documentBundle(smallDocument());
    expect(Object.keys(bundle).sort()).toEqual([PLACEVIZ, 'text/plain']);
    expect(bundle['text/plain']).toBe(
      'placeviz inspector kept when the kernel stopped: 3 ops on 3 devices, 2 runs, ' +
        '5 op executions',
    );
    const renderer = new PlacementRenderer();
    await renderer.renderModel({
      data: JSON.parse(JSON.stringify(bundle)),
      metadata: {},
      trusted: false,
      setData: () => undefined,
    });
    expect(renderer.node.querySelector('.placeviz-host-error')).toBeNull();
    const root = renderer.node.querySelector<HTMLElement>('.placeviz-inspector')!;
    expect(root.dataset).toMatchObject({ ops: '3', devices: '3', events: '7', runs: '2' });
    renderer.dispose();
  });
});

describe('rescueOutputs', () => {
  it('writes the rewritten outputs into the output area model, only those', () => {
    const items = [text, view('live'), view('slider'), savedCopy('live')];
    const writes: [number, nbformat.IOutput][] = [];
    const model: Outputs = {
      length: items.length,
      get: (index) => ({ toJSON: () => items[index] }),
      set: (index, output) => writes.push([index, output]),
    };
    expect(rescueOutputs(model, documentOf)).toBe(2);
    expect(writes.map(([index]) => index)).toEqual([1, 3]);
    expect((writes[0][1] as nbformat.IDisplayData).data[PLACEVIZ]).toEqual(smallDocument());
  });
});
