// @vitest-environment jsdom
/**
 * Control flow as the inspector shows it, from the golden documents Python writes
 * (placeviz/examples/documents.py: a 2-layer LSTM under dynamic_rnn over 5 steps, a layer per
 * GPU; a cond with a branch per GPU run both ways): each loop's iterations from the events'
 * frame and iteration columns, the ops of the branch not taken, and how the graph, its key and
 * the details pane show them.
 */
import { describe, expect, it, vi } from 'vitest';
import { controlFlowOf, executedIn, executionsOf, loopText, shownRun } from './controlflow';
import { flowMarks } from './dagflow';
import { buildDagModel, storeHierarchy } from './dagmodel';
import { allExpanded } from './scopes';
import { PlacementStore } from './store';
import { frames, golden, renderedInspectors } from './__tests__/rendered';
import type { PlacementDocument } from './types';

const STEPS = 5; // lstm_dynamic()'s default
const id = (doc: PlacementDocument, name: string) => doc.nodes.find((n) => n.name === name)!.id;
const CELL0_MATMUL = 'rnn/while/rnn/multi_rnn_cell/cell_0/lstm_cell/MatMul';

describe('controlFlowOf', () => {
  it("counts a dynamic_rnn loop's iterations from its executions", () => {
    const doc = golden('lstm-dynamic');
    const store = PlacementStore.fromDocument(doc);
    const run = shownRun(store.runs, null);
    const flow = controlFlowOf(store, run);
    expect(flow.loops).toEqual([
      { node: id(doc, 'rnn/while/LoopCond'), scope: 'rnn/while', iterations: STEPS },
    ]);
    expect(loopText(flow.loops[0])).toBe(`while · ${STEPS} iterations`);
    // The body's ops ran in every iteration but the last: none is marked not executed.
    expect(flow.notRunCount).toBe(0);
    // Before any run there is nothing to count.
    expect(controlFlowOf(store, null).loops[0].iterations).toBeNull();
  });

  it("lists an op's executions per iteration, the last one not run", () => {
    const doc = golden('lstm-dynamic');
    const store = PlacementStore.fromDocument(doc);
    const executions = executionsOf(store, id(doc, CELL0_MATMUL), shownRun(store.runs, null));
    expect(executions.map((e) => e.iteration)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(executions.map((e) => e.ran)).toEqual([true, true, true, true, true, false]);
    const gpu0 = doc.devices.find((d) => d.name.endsWith('GPU:0'))!.id;
    expect(new Set(executions.map((e) => e.device))).toEqual(new Set([gpu0]));
    // The iterations follow one another in time.
    const ran = executions.filter((e) => e.ran);
    ran.slice(1).forEach((e, k) => expect(e.t0).toBeGreaterThanOrEqual(ran[k].t1));
  });

  it('marks the branch not taken in the run shown, and the other one in the other run', () => {
    const doc = golden('cond');
    const store = PlacementStore.fromDocument(doc);
    const [first, second] = doc.runs.map((r) => r.id);
    const names = (run: number) => {
      const flow = controlFlowOf(store, run);
      return doc.nodes.filter((_, i) => flow.notRun[i] === 1).map((n) => n.name);
    };
    // The first run took the true branch (`first`), the second the false one (`second`).
    expect(names(second)).toEqual(['pick/switch_t', 'pick/MatMul', 'pick/Const', 'pick/first']);
    expect(names(first)).toEqual(['pick/switch_f', 'pick/MatMul_1', 'pick/Const_1', 'pick/second']);
    expect(executedIn(store, id(doc, 'pick/first'), second)).toBe('not-run');
    expect(executedIn(store, id(doc, 'pick/first'), first)).toBe('ran');
    expect(controlFlowOf(store, second).loops).toEqual([]);
  });
});

describe('loopText', () => {
  it('says one iteration, many, or that the loop did not run (a loop in a branch not taken)', () => {
    const loop = (iterations: number | null) => ({ node: 1, scope: 'while', iterations });
    expect(loopText(loop(1))).toBe('while · 1 iteration');
    expect(loopText(loop(1200))).toBe('while · 1,200 iterations');
    expect(loopText(loop(0))).toBe('while · 0 iterations');
    expect(loopText(loop(null))).toBe('while · not run');
  });
});

describe('a document whose writer left the loop columns at 0', () => {
  it('has no loops nor executions: only a LoopCond names a frame', () => {
    const doc = golden('towers');
    const zeros = doc.events.kind.map(() => 0);
    doc.events.frame = zeros; // a what-if's events (placeviz/runtime/what_if.py) look so
    doc.events.iteration = zeros;
    const store = PlacementStore.fromDocument(doc);
    const run = shownRun(store.runs, null);
    expect(controlFlowOf(store, run).loops).toEqual([]);
    for (const node of doc.nodes) {
      expect(executionsOf(store, node.id, run)).toEqual([]);
    }
  });
});

describe('flowMarks', () => {
  it("marks the loop's scope, folded or opened, and the boxes of the branch not taken", () => {
    const lstm = PlacementStore.fromDocument(golden('lstm-dynamic'));
    const flow = controlFlowOf(lstm, shownRun(lstm.runs, null));
    const hierarchy = storeHierarchy(lstm);
    const opened = buildDagModel(lstm, allExpanded(hierarchy), hierarchy);
    const marks = flowMarks(opened, flow);
    expect(marks.loopContainers.filter(Boolean)).toEqual(flow.loops);
    expect(marks.loopBoxes.some(Boolean)).toBe(false);
    const folded = buildDagModel(lstm, new Set(['', 'rnn']), hierarchy);
    const foldedMarks = flowMarks(folded, flow);
    const box = foldedMarks.loopBoxes.findIndex(Boolean);
    expect(folded.folded.boxes[box].name).toBe('rnn/while');

    const cond = PlacementStore.fromDocument(golden('cond'));
    const condFlow = controlFlowOf(cond, shownRun(cond.runs, null));
    const model = buildDagModel(cond, allExpanded(storeHierarchy(cond)), storeHierarchy(cond));
    const faint = flowMarks(model, condFlow).notRun;
    const faintNames = model.folded.boxes.filter((_, b) => faint[b] === 1).map((box) => box.name);
    expect(faintNames.sort()).toEqual(['pick/Const', 'pick/MatMul', 'pick/first', 'pick/switch_t']);
  });
});

describe('the inspector on control flow', () => {
  const { render, texts } = renderedInspectors();

  it('draws the loop with its iterations, in the key, and lists an op per iteration', async () => {
    // A canvas as wide as a notebook's: the graph opens down to the loop and its body.
    vi.spyOn(HTMLCanvasElement.prototype, 'clientWidth', 'get').mockReturnValue(1200);
    vi.spyOn(HTMLCanvasElement.prototype, 'clientHeight', 'get').mockReturnValue(600);
    const doc = golden('lstm-dynamic');
    const inspector = await render(doc);
    const dag = inspector.element.querySelector<HTMLElement>('.placeviz-dag-view')!;
    expect(dag.dataset.loops).toBe(`rnn/while=${STEPS}`);
    expect(dag.dataset.marks!.split(' ')).toContain('loop');
    // The loop's title says its iterations; the first paint stays readable.
    expect(texts()).toContain('while · 5 iterations'); // the folded loop's tab
    // Found, the loop's condition opens the loop: a container of its body, marked a loop.
    const search = dag.querySelector<HTMLInputElement>('.placeviz-search')!;
    search.value = 'rnn/while/LoopCond';
    search.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    await frames();
    expect(dag.dataset.loopsOpened).toBe('1');
    expect(dag.dataset.marks!.split(' ')).toContain('loop');
    expect(Number(dag.dataset.boxes)).toBeLessThanOrEqual(60);
    expect(dag.dataset.labelOverlaps).toBe('0');
    expect(dag.textContent).toContain('while loop (its iterations in the run shown)');
    inspector.state.set({ selected: id(doc, CELL0_MATMUL) });
    await frames();
    const details = inspector.element.querySelector<HTMLElement>('.placeviz-details')!;
    const items = [...details.querySelectorAll('.placeviz-details-iterations li')];
    expect(items.map((li) => (li as HTMLElement).dataset.iteration)).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
    ]);
    expect(items[0].textContent).toMatch(/^iteration 1 · .* · GPU:0$/);
    expect(items[STEPS].textContent).toContain('not executed');
    expect(details.textContent).toContain(`iterations (${STEPS} run)`);
  });

  it('dims the branch not taken, says so in the key and the details, and follows the run picked', async () => {
    const doc = golden('cond');
    const inspector = await render(doc);
    const dag = inspector.element.querySelector<HTMLElement>('.placeviz-dag-view')!;
    expect(dag.dataset.marks!.split(' ')).toContain('not-run');
    expect(Number(dag.dataset.notRunBoxes)).toBeGreaterThan(0);
    expect(dag.textContent).toContain('not executed in the run shown');
    inspector.state.set({ selected: id(doc, 'pick/first') });
    await frames();
    const details = () => inspector.element.querySelector('.placeviz-details')!.textContent!;
    expect(details()).toContain('not executed in run 2');
    inspector.state.set({ run: doc.runs[0].id });
    await frames();
    expect(details()).not.toContain('not executed');
    inspector.state.set({ selected: id(doc, 'pick/second') });
    await frames();
    expect(details()).toContain('not executed in run 1');
  });
});
