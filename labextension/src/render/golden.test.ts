// @vitest-environment jsdom
/**
 * The golden documents Python writes (scripts/write_golden_documents.py; tests/test_golden_documents.py
 * keeps them current) rendered whole by the inspector: what every view shows is derived here
 * from the document itself, so a change on either side of the contract shows up.
 */
import { describe, expect, it } from 'vitest';
import { type Inspector } from './inspector';
import { frames, golden, renderedInspectors } from './__tests__/rendered';
import { EventKind, type PlacementDocument } from './types';

const GOLDEN = [
  'towers',
  'mlp-training',
  'failed-placement',
  'scoped-3001',
  'loop-200',
  'lstm-dynamic',
  'cond',
] as const;
const MAX_FIRST_PAINT_BOXES = 60;

const inspectors = renderedInspectors();

async function render(
  doc: PlacementDocument,
): Promise<{ root: HTMLElement; inspector: Inspector }> {
  const inspector = await inspectors.render(doc);
  return { root: inspector.element, inspector };
}

const count = (doc: PlacementDocument, kind: number) =>
  doc.events.kind.filter((k) => k === kind).length;

describe.each(GOLDEN)('the golden document %s', (name) => {
  it('renders every op, run and event, folded to a readable first paint', async () => {
    const doc = golden(name);
    const { root } = await render(doc);
    expect(root.dataset.schema).toBe(doc.schema);
    expect(root.dataset.ops).toBe(String(doc.nodes.length));
    expect(root.dataset.devices).toBe(String(doc.devices.length));
    expect(root.dataset.runs).toBe(String(doc.runs.length));
    expect(root.dataset.events).toBe(String(doc.events.kind.length));
    const dag = root.querySelector<HTMLElement>('.placeviz-dag-view')!.dataset;
    expect(dag.ops).toBe(String(doc.nodes.length));
    const visible = Number(dag.visibleNodes);
    expect(visible).toBeGreaterThan(0);
    expect(visible).toBeLessThanOrEqual(MAX_FIRST_PAINT_BOXES);
    expect(dag.inView).toBe(dag.visibleNodes);
    expect(dag.labelOverlaps).toBe('0');
    expect(dag.labelsDrawn).toBe(dag.visibleNodes);
    const timing = root.querySelector<HTMLElement>('.placeviz-timing')!.dataset;
    expect(Number(timing.bars)).toBe(count(doc, EventKind.OP));
  });
});

describe('what the golden documents show', () => {
  it('the failed placement: the run error in the header, the unplaced op with its error', async () => {
    const doc = golden('failed-placement');
    const { root, inspector } = await render(doc);
    const failedRun = doc.runs.find((r) => r.status === 'error')!;
    expect(root.querySelector('.placeviz-errors')!.textContent).toContain(
      failedRun.error!.split('\n')[0],
    );
    const unplaced = doc.nodes.find((n) => n.reason?.kind === 'unplaced')!;
    expect(root.querySelector('.placeviz-runs')!.textContent).toContain('1 op not placed');
    inspector.state.set({ selected: unplaced.id });
    await frames();
    const details = root.querySelector('.placeviz-details')!.textContent!;
    expect(details).toContain(unplaced.name);
    expect(details).toContain(unplaced.reason!.text.split('\n')[0]);
  });

  it('the 200-run loop: every run listed, the scrubber over the last run', async () => {
    const doc = golden('loop-200');
    const { root } = await render(doc);
    expect(root.querySelector('.placeviz-runs')!.textContent).toMatch(/^run 200 of 200 · ok/);
    const picker = root.querySelector<HTMLSelectElement>('.placeviz-scrubber select')!;
    expect(picker.textContent).toContain('all runs (200)');
  });

  it('the towers: each tower on its own GPU, the sum on the CPU', async () => {
    const doc = golden('towers');
    const { root, inspector } = await render(doc);
    const sum = doc.nodes.find((n) => n.type === 'AddN')!;
    inspector.state.set({ selected: sum.id });
    await frames();
    const details = root.querySelector('.placeviz-details')!.textContent!;
    expect(details).toContain(sum.reason!.text);
    expect(details).toContain('CPU:0');
  });
});
