// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DagView, type PaintInfo } from './dag';
import { WAITING_ALPHA } from './dagcolour';
import { transferColour } from './colours';
import { layoutDag } from './layout';
import { PlacementStore } from './store';
import { ViewState } from './viewstate';
import { CPU, GPU0, columns, device, node, smallDocument } from './__tests__/fixtures';
import { trainingStepDocument } from './__tests__/trainingstep';
import { towersDocument } from './__tests__/towers';
import { LABEL_FONT_PX, MIN_LABEL_FONT_PX, NORMAL_FONT_PX } from './boxmetrics';
import { ROOM_VARIABLE } from './dagsize';
import type { PlacementDocument } from './types';
import { follow } from './__tests__/follow';
import { fakeContext, useContext } from './__tests__/canvas';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const EVIL = '<img src=x onerror=alert(1)>';

vi.mock('./layout', async (original) => {
  const actual = await original<typeof import('./layout')>();
  return { ...actual, layoutDag: vi.fn(actual.layoutDag) };
});

function frame(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 40));
}

function setup(
  context: CanvasRenderingContext2D | null = null,
  edit: (doc: ReturnType<typeof smallDocument>) => void = () => {},
) {
  useContext(context);
  const doc = smallDocument();
  doc.nodes[0].name = EVIL;
  edit(doc);
  const state = new ViewState();
  const { parent, store, view } = mount(doc, state);
  follow(store, view);
  const paints: PaintInfo[] = [];
  view.onPaint((info) => paints.push(info));
  return { store, state, parent, view, paints };
}

/** A DagView of `doc` in a new element of the page (after useContext). */
function mount(doc: PlacementDocument, state = new ViewState()) {
  const parent = document.createElement('div');
  document.body.append(parent);
  const store = PlacementStore.fromDocument(doc);
  return { parent, store, view: new DagView(parent, store, state) };
}

/** The view draws `boxes` boxes, all in view and all named, no label over another. */
function expectAllNamed(data: DOMStringMap, boxes: string): void {
  expect(data.visibleNodes).toBe(boxes);
  expect(data.inView).toBe(boxes);
  expect(data.labelsDrawn).toBe(boxes);
  expect(data.labelOverlaps).toBe('0');
}

/** A DagView of hundredScopes() on a fake 2D context. */
function hundredScopesView(): DagView {
  useContext();
  return mount(hundredScopes()).view;
}

/** A mouse event at the canvas centre, where focus() puts a node (jsdom has no layout). */
function mouse(type: string, target: Element): void {
  target.dispatchEvent(new MouseEvent(type, { clientX: 320, clientY: 190, bubbles: true }));
}

afterEach(() => {
  document.body.replaceChildren();
});

/** An input and 100 chained scopes of 30 ops: the 3,001-op graph of the browser test. */
function hundredScopes(): PlacementDocument {
  const doc = smallDocument();
  doc.devices = [device(0, CPU), device(1, GPU0)];
  doc.nodes = [node(0, 'input', { type: 'Const' })];
  for (let b = 0; b < 100; b++) {
    for (let k = 0; k < 30; k++) {
      const type = ['MatMul', 'AddV2', 'Relu'][k % 3];
      doc.nodes.push(node(doc.nodes.length, `block${b}/${type}_${k}`, { type, device: 1 }));
    }
  }
  doc.edges = doc.nodes.slice(1).map((_, i) => ({
    src: i,
    dst: i + 1,
    kind: 'data' as const,
    bytes: 64,
    crosses: i === 0,
  }));
  doc.runs = [];
  doc.events.kind = [];
  return doc;
}

describe('DagView', () => {
  it('builds its controls and paints without a 2D context', async () => {
    const { parent, view, paints } = setup(null);
    expect(parent.querySelector('canvas.placeviz-dag')).not.toBeNull();
    expect(parent.querySelector('input.placeviz-search')).not.toBeNull();
    expect(parent.querySelector('select.placeviz-colour')).not.toBeNull();
    await frame();
    expect(paints).toHaveLength(1);
    expect(paints[0]).toMatchObject({ drawn: 3, ops: 3 });
    expect(view.element.dataset.boxes).toBe('3');
    view.dispose();
    expect(parent.querySelector('canvas')).toBeNull();
  });

  it('centres the first match on Enter in the search box and filters by it', () => {
    const { state, parent, view } = setup();
    const focus = vi.spyOn(view, 'focus');
    const search = parent.querySelector<HTMLInputElement>('input.placeviz-search')!;
    const enter = (text: string) => {
      search.value = text;
      search.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    };
    enter('tower_0/B');
    expect(focus).toHaveBeenLastCalledWith(1);
    expect(state.get('filter')).toBe('tower_0/B');
    enter('relu'); // by type
    expect(focus).toHaveBeenLastCalledWith(2);
    enter('GPU:1'); // by device
    expect(focus).toHaveBeenLastCalledWith(2);
    enter('nothing like it');
    expect(focus).toHaveBeenCalledTimes(3);
    expect(state.get('selected')).toBeNull();
  });

  it('dims the ops the filter leaves out', async () => {
    const { state, view } = setup();
    await frame();
    expect(view.element.dataset.matching).toBe('3');
    state.set({ filter: 'TOWER_0' });
    await frame();
    expect(view.element.dataset.matching).toBe('2');
    state.set({ filter: GPU0 });
    await frame();
    expect(view.element.dataset.matching).toBe('1');
    state.set({ filter: 'matmul' });
    await frame();
    expect(view.element.dataset.matching).toBe('1');
  });

  it('draws op names as canvas text, literally', async () => {
    const { ctx, texts } = fakeContext();
    const { parent } = setup(ctx);
    await frame();
    expect(texts.some((t) => t.startsWith('<img src=x'))).toBe(true);
    expect(parent.querySelector('img')).toBeNull();
  });

  it('shows a text tooltip on hover and selects on click', async () => {
    const { ctx } = fakeContext();
    const { state, parent, view } = setup(ctx);
    const canvas = parent.querySelector('canvas')!;
    view.focus(0);
    mouse('mousemove', canvas);
    const tooltip = parent.querySelector<HTMLElement>('.placeviz-tooltip')!;
    expect(tooltip.hidden).toBe(false);
    expect(tooltip.firstElementChild?.textContent).toBe(EVIL);
    expect(tooltip.textContent).toContain('Const');
    expect(tooltip.querySelector('img')).toBeNull();
    expect(state.get('hovered')).toBe(0);
    mouse('mousedown', canvas);
    mouse('mouseup', canvas);
    expect(state.get('selected')).toBe(0);
    mouse('mouseleave', canvas);
    expect(tooltip.hidden).toBe(true);
    expect(state.get('hovered')).toBeNull();
  });

  it('folds a scope on double-click of its op and opens it again', async () => {
    const { parent, view } = setup(fakeContext().ctx);
    const canvas = parent.querySelector('canvas')!;
    view.focus(1);
    mouse('dblclick', canvas);
    await frame();
    expect(view.element.dataset.boxes).toBe('2');
    view.focus(2); // focusing an op inside a folded scope opens it
    await frame();
    expect(view.element.dataset.boxes).toBe('3');
  });

  it('follows the colour select and repaints on hover from other views', async () => {
    const { state, parent, paints } = setup();
    await frame();
    const select = parent.querySelector<HTMLSelectElement>('select.placeviz-colour')!;
    select.value = 'state';
    select.dispatchEvent(new Event('change'));
    expect(state.get('colour')).toBe('state');
    state.set({ colour: 'memory' });
    expect(select.value).toBe('memory');
    await frame();
    const before = paints.length;
    state.set({ hovered: 2 });
    await frame();
    expect(paints.length).toBe(before + 1);
  });

  it('lays out again on new tables but only recolours on event batches', async () => {
    const { store, state, view, paints } = setup();
    state.set({ colour: 'state' });
    await frame();
    const layouts = vi.mocked(layoutDag).mock.calls.length;
    store.appendLists({ kind: [2], t0: [400], t1: [500], node: [0], run: [2] });
    await frame();
    expect(vi.mocked(layoutDag).mock.calls.length).toBe(layouts);
    expect(paints.length).toBeGreaterThan(1);
    store.applyTables({ ...smallDocument(), nodes: smallDocument().nodes.slice(0, 2) });
    await frame();
    expect(vi.mocked(layoutDag).mock.calls.length).toBeGreaterThan(layouts);
    expect(view.element.dataset.boxes).toBe('2');
  });

  it('keeps its data attributes: ops, boxes drawn, boxes in view, labels drawn, overlaps', async () => {
    const { ctx } = fakeContext();
    const { view } = setup(ctx);
    await frame();
    const data = view.element.dataset;
    expect(data.ops).toBe('3');
    expectAllNamed(data, '3'); // fitted at first paint
    view.toggleGroup('tower_0'); // fold it
    await frame();
    expect(data.visibleNodes).toBe('2');
    expect(data.inView).toBe('2');
  });

  it('opens 3,001 ops in 100 scopes as two boxes in view, and keeps them in view when opened', async () => {
    const view = hundredScopesView();
    await frame();
    const data = view.element.dataset;
    expect(data.ops).toBe('3001');
    expectAllNamed(data, '2');
    view.toggleGroup('block[0-99]');
    await frame();
    expect(data.visibleNodes).toBe('101');
    expect(data.inView).toBe('101');
    // On jsdom's 640 x 380 canvas the 100 folded blocks say their names; the input, a smaller
    // op box with no room for its name at this zoom, says it on a tag in its colour.
    expect(data.labelsDrawn).toBe('101');
    expect(data.unnamed).toBe('');
    expect(data.labelOverlaps).toBe('0');
    view.toggleGroup('block42');
    await frame();
    expect(data.visibleNodes).toBe('130');
    expect(data.inView).toBe('130');
    expect(data.labelOverlaps).toBe('0');
  });

  it('names every box of a training step at first paint, and after opening a group', async () => {
    const { ctx, texts } = fakeContext();
    useContext(ctx);
    const { store, view } = mount(trainingStepDocument());
    await frame();
    const data = view.element.dataset;
    const readable = () => {
      expect(Number(data.visibleNodes)).toBeLessThanOrEqual(60);
      expect(data.inView).toBe(data.visibleNodes);
      expect(data.labelsDrawn).toBe(data.visibleNodes);
      expect(data.labelOverlaps).toBe('0');
    };
    readable();
    expect(Number(data.visibleNodes)).toBeLessThan(store.nodes.length);
    expect(texts).toEqual(expect.arrayContaining(['mlp', 'gradients', 'Adam', 'init']));
    view.toggleGroup('[gradients]');
    await frame();
    readable();
    // Opening Adam, the view folds what it had opened as far as it must to name every box.
    texts.length = 0;
    view.toggleGroup('[Adam]');
    await frame();
    readable();
    // both opened (their ops named by their names cut in the middle), with their titles
    expect(texts).toEqual(expect.arrayContaining(['…/Shape', 'gradients', 'Adam']));
    expect(texts).toContain('…/learning_rate'); // Adam's
  });

  it('chooses the folding again once the canvas is laid out, for its size', async () => {
    useContext();
    const { parent, view } = mount(trainingStepDocument());
    await frame();
    const data = view.element.dataset;
    const fallback = Number(data.visibleNodes); // 640 x 380: jsdom lays nothing out
    const canvas = parent.querySelector('canvas')!;
    const size = (width: number, height: number) => {
      Object.defineProperty(canvas, 'clientWidth', { configurable: true, value: width });
      Object.defineProperty(canvas, 'clientHeight', { configurable: true, value: height });
      view.fit(); // a paint, as the ResizeObserver would schedule
    };
    size(300, 200); // too small to name even the top level: all folded
    await frame();
    const small = Number(data.visibleNodes);
    expect(small).toBeLessThan(fallback);
    size(1600, 900);
    await frame();
    expect(Number(data.visibleNodes)).toBeGreaterThan(small);
    expect(Number(data.visibleNodes)).toBeGreaterThanOrEqual(fallback);
    expect(data.labelsDrawn).toBe(data.visibleNodes);
    expect(data.inView).toBe(data.visibleNodes);
  });

  it('names every box of a graph fitted below the readable zoom: smaller, cut shorter', async () => {
    // A wide top level without side groups on half a notebook page (a comparison's column):
    // nothing folds further, so the fit is below READABLE_SCALE and the op boxes are ~12 px tall.
    const { ctx, texts } = fakeContext();
    const fonts: string[] = [];
    ctx.fillText = (text: string) => {
      texts.push(text);
      fonts.push(ctx.font);
    };
    useContext(ctx);
    const { parent, store, view } = mount(towersDocument(false));
    const canvas = parent.querySelector('canvas')!;
    Object.defineProperty(canvas, 'clientWidth', { configurable: true, value: 415 });
    Object.defineProperty(canvas, 'clientHeight', { configurable: true, value: 352 });
    view.fit();
    await frame();
    const data = view.element.dataset;
    expectAllNamed(data, '9'); // images, five branches, AddN, the softmax, loss
    expect(texts).toEqual(expect.arrayContaining(['images', 'AddN', 'loss', 'inception']));
    const softmax = texts.find((t) => t.startsWith('SparseSo'))!;
    expect(softmax).toMatch(/^SparseSo\w*…$/); // cut to its box, never left out
    const size = (font: string) => Number(/(\d+)px/.exec(font)![1]);
    const sizes = fonts.map(size);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(MIN_LABEL_FONT_PX);
    expect(Math.min(...sizes)).toBeLessThan(LABEL_FONT_PX); // the op boxes' names
    expect(size(fonts[texts.indexOf('images')])).toBeLessThan(LABEL_FONT_PX);
    // Its whole name is a hover away.
    const op = store.nodes.find((n) => n.name.startsWith('SparseSo'))!;
    view.focus(op.id);
    canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: 207, clientY: 176 }));
    const tooltip = parent.querySelector<HTMLElement>('.placeviz-tooltip')!;
    expect(tooltip.hidden).toBe(false);
    expect(tooltip.firstElementChild!.textContent).toBe('SparseSoftmaxCrossEntropyWithLogits');
  });

  it('fits the graph again when its cell is resized, until the user moves it', async () => {
    useContext();
    const state = new ViewState();
    // The seeds' towers: four constants side by side, a graph as wide as the canvas.
    const towers = JSON.parse(
      readFileSync(join(__dirname, '__tests__', 'golden', 'towers.json'), 'utf-8'),
    ) as PlacementDocument;
    const { parent, view } = mount(towers, state);
    await frame();
    const data = view.element.dataset;
    const canvas = parent.querySelector('canvas')!;
    const resize = async (width: number) => {
      Object.defineProperty(canvas, 'clientWidth', { configurable: true, value: width });
      Object.defineProperty(canvas, 'clientHeight', { configurable: true, value: 380 });
      state.set({ colour: state.get('colour') === 'device' ? 'state' : 'device' }); // a repaint
      await frame();
    };
    await resize(640);
    expect(data.inView).toBe(data.visibleNodes);
    await resize(520); // narrower by less than a quarter: the folding stays, the fit follows
    expect(data.inView).toBe(data.visibleNodes);
    await resize(600);
    expect(data.inView).toBe(data.visibleNodes);
  });

  it("names the tutorial's four towers (eight constants side by side) in a notebook-wide cell", async () => {
    useContext();
    const nodes = [];
    const edges = [];
    for (let t = 0; t < 4; t++) {
      const [a, b, m] = [3 * t, 3 * t + 1, 3 * t + 2];
      nodes.push(node(a, t ? `Const_${2 * t}` : 'Const'), node(b, `Const_${2 * t + 1}`));
      nodes.push(node(m, t ? `MatMul_${t}` : 'MatMul'));
      edges.push(
        ...[a, b].map((src) => ({ src, dst: m, kind: 'data' as const, bytes: 24, crosses: false })),
      );
      edges.push({ src: m, dst: 12, kind: 'data' as const, bytes: 16, crosses: false });
    }
    nodes.push(node(12, 'AddN'));
    const doc = { ...smallDocument(), nodes, edges, runs: [], events: columns([]) };
    const { parent, view } = mount(doc);
    const canvas = parent.querySelector('canvas')!;
    Object.defineProperty(canvas, 'clientWidth', { configurable: true, value: 510 });
    Object.defineProperty(canvas, 'clientHeight', { configurable: true, value: 460 });
    view.fit();
    await frame();
    expectAllNamed(view.element.dataset, '13');
  });

  it('draws a 3-op graph at the normal font in a canvas only as tall as it needs', async () => {
    const { ctx, texts } = fakeContext();
    const fonts: string[] = [];
    ctx.fillText = (text: string) => {
      texts.push(text);
      fonts.push(ctx.font);
    };
    useContext(ctx);
    const nodes = [node(0, 'a'), node(1, 'b'), node(2, 'product')];
    const edges = [0, 1].map((src) => ({
      src,
      dst: 2,
      kind: 'data' as const,
      bytes: 16,
      crosses: false,
    }));
    const doc = { ...smallDocument(), nodes, edges, runs: [], events: columns([]) };
    const { parent, view } = mount(doc);
    view.element.style.setProperty(ROOM_VARIABLE, '480px'); // the page's room, as index.css
    const canvas = parent.querySelector('canvas')!;
    Object.defineProperty(canvas, 'clientWidth', { configurable: true, value: 880 });
    Object.defineProperty(canvas, 'clientHeight', { configurable: true, value: 480 });
    view.fit();
    await frame();
    const data = view.element.dataset;
    expectAllNamed(data, '3');
    expect([...texts].sort()).toEqual(['a', 'b', 'product']);
    expect(new Set(fonts)).toEqual(new Set([`${NORMAL_FONT_PX}px sans-serif`]));
    const height = Number(data.canvasHeight);
    expect(height).toBeLessThan(200); // two rows of boxes, not 480 px of empty canvas
    expect(canvas.style.height).toBe(`${height}px`);
  });

  it('gives a graph that needs the whole room all of it, every box named', async () => {
    useContext();
    const { parent, view } = mount(trainingStepDocument());
    view.element.style.setProperty(ROOM_VARIABLE, '480px');
    const canvas = parent.querySelector('canvas')!;
    Object.defineProperty(canvas, 'clientWidth', { configurable: true, value: 880 });
    Object.defineProperty(canvas, 'clientHeight', { configurable: true, value: 480 });
    view.fit();
    await frame();
    const data = view.element.dataset;
    expect(data.canvasHeight).toBe('480');
    expect(canvas.style.height).toBe('480px');
    expect(data.labelsDrawn).toBe(data.visibleNodes);
  });

  it("keys every mark the graph draws: the dashed border of a simulated device's op", async () => {
    useContext();
    const doc = smallDocument();
    doc.devices[1] = { ...doc.devices[1], kind: 'simulated' };
    const { parent, view } = mount(doc);
    await frame();
    const marks = view.element.dataset.marks!.split(' ');
    expect(marks).toEqual(expect.arrayContaining(['simulated', 'transfer', 'mismatch']));
    const listed = [...parent.querySelectorAll<HTMLElement>('.placeviz-dag-key [data-mark]')];
    expect(listed.map((item) => item.dataset.mark).sort()).toEqual([...marks].sort());
    expect(listed.map((item) => item.textContent)).toContain('dashed: on a simulated device');
  });

  it('brings an opened group into view after the user moved the graph', async () => {
    const view = hundredScopesView();
    await frame();
    view.focus(0); // the user's own zoom: close in on the input
    await frame();
    view.toggleGroup('block[0-99]');
    await frame();
    const data = view.element.dataset;
    expect(data.visibleNodes).toBe('101');
    expect(Number(data.inView)).toBeGreaterThanOrEqual(100); // the whole series container
  });

  it('says when the search matches nothing', async () => {
    const { state, parent } = setup();
    const status = parent.querySelector<HTMLElement>('.placeviz-search-status')!;
    state.set({ filter: 'no such op' });
    await frame();
    expect(status.textContent).toBe('no op matches “no such op”');
    expect(status.classList.contains('placeviz-search-none')).toBe(true);
    state.set({ filter: 'tower_0' });
    await frame();
    expect(status.textContent).toBe('2 ops match');
    state.set({ filter: '' });
    await frame();
    expect(status.textContent).toBe('');
  });

  it('lets the wheel scroll the page unless the graph has focus or ctrl is held', () => {
    const { parent } = setup(fakeContext().ctx);
    const canvas = parent.querySelector('canvas')!;
    const wheel = (ctrlKey: boolean) => {
      const event = new WheelEvent('wheel', { deltaY: 100, ctrlKey, cancelable: true });
      canvas.dispatchEvent(event);
      return event.defaultPrevented;
    };
    expect(wheel(false)).toBe(false);
    expect(wheel(true)).toBe(true);
    mouse('mousedown', canvas);
    mouse('mouseup', canvas);
    expect(document.activeElement).toBe(canvas);
    expect(wheel(false)).toBe(true);
  });

  it('fits the graph again from the fit button after the user moved it', async () => {
    const { parent, view } = setup(fakeContext().ctx);
    await frame();
    view.focus(2);
    await frame();
    const button = parent.querySelector<HTMLButtonElement>('button.placeviz-fit')!;
    expect(button.textContent).toBe('fit');
    view.element.querySelector('canvas')!.dispatchEvent(new MouseEvent('mousedown'));
    parent.ownerDocument.defaultView!.dispatchEvent(
      new MouseEvent('mousemove', { clientX: 900, clientY: 900 }),
    );
    await frame();
    expect(Number(view.element.dataset.inView)).toBeLessThan(3);
    button.click();
    await frame();
    expect(view.element.dataset.inView).toBe('3');
  });

  it('outlines a failed op, and an unplaced one, in red', async () => {
    const honoured = (doc: ReturnType<typeof smallDocument>) => {
      doc.nodes[1].requested = ''; // no mismatch outline: only the failure is red
    };
    let fake = fakeContext();
    setup(fake.ctx, honoured); // smallDocument's run 1 fails in tower_0/b
    await frame();
    expect(fake.strokes).toContain('#d32f2f');
    fake = fakeContext();
    setup(fake.ctx, (doc) => {
      honoured(doc);
      doc.runs = [];
      doc.events = smallDocument().events;
      doc.events.kind = [];
      doc.nodes[2].device = null;
    });
    await frame();
    expect(fake.strokes).toContain('#d32f2f');
    fake = fakeContext();
    setup(fake.ctx, (doc) => {
      honoured(doc);
      doc.runs = doc.runs.slice(0, 1);
    });
    await frame();
    expect(fake.strokes).not.toContain('#d32f2f');
  });

  it('rings the ops named in `marked` (a folded group holding one too) and counts them', async () => {
    const paintWith = async (marked?: ReadonlySet<string>) => {
      const fake = fakeContext();
      useContext(fake.ctx);
      const parent = document.body.appendChild(document.createElement('div'));
      const store = PlacementStore.fromDocument(smallDocument());
      const view = new DagView(parent, store, new ViewState(), { marked });
      await frame();
      const ringColour = transferColour(store.devices); // no --placeviz-dag-marked in jsdom
      return { view, rings: fake.strokes.filter((s) => s === ringColour).length };
    };
    const plain = await paintWith();
    expect(plain.view.element.dataset.markedNodes).toBe('0');
    expect(plain.view.element.dataset.markedBoxes).toBe('0');
    expect(plain.view.element.querySelector('.placeviz-key-marked')).toBeNull();
    const marked = await paintWith(new Set(['tower_0/c', 'tower_0/b', 'not in this graph']));
    const data = marked.view.element.dataset;
    expect(data.markedNodes).toBe('2');
    expect(data.visibleNodes).toBe('3');
    expect(data.markedBoxes).toBe('2');
    expect(marked.rings).toBe(plain.rings + 1); // one path of rings, in its own colour
    expect(marked.view.element.querySelector('.placeviz-key-marked')!.textContent).toBe(
      'moved in the other placement',
    );
    // Folded, the group holding them is ringed.
    marked.view.toggleGroup('tower_0');
    await frame();
    expect(data.visibleNodes).toBe('2');
    expect(data.markedBoxes).toBe('1');
    expect(data.markedNodes).toBe('2');
  });

  it('repaints the run in flight without laying out again, in any colour mode', async () => {
    const fake = fakeContext();
    const { store, paints } = setup(fake.ctx);
    await frame();
    const layouts = vi.mocked(layoutDag).mock.calls.length;
    const before = paints.length;
    expect(fake.strokes).not.toContain('#ffa000');
    fake.fills.length = 0;
    store.setProgress({ run: 2, waiting: [2], running: [1], done: [0] });
    await frame();
    expect(paints.length).toBe(before + 1);
    expect(vi.mocked(layoutDag).mock.calls.length).toBe(layouts);
    expect(fake.strokes).toContain('#ffa000'); // the running op's outline
    expect(fake.fills).toContain(WAITING_ALPHA); // the waiting op, faded
    fake.strokes.length = 0;
    store.setProgress(null);
    await frame();
    expect(paints.length).toBe(before + 2);
    expect(fake.strokes).not.toContain('#ffa000');
    expect(vi.mocked(layoutDag).mock.calls.length).toBe(layouts);
  });
});
