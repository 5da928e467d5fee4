// @vitest-environment jsdom
/**
 * The contract of view.ts, kept by every view the inspector creates (inspector.ts): on a whole
 * recorded document, `update` after the document changed draws what a view made anew from the
 * changed document draws, a second `update` with nothing new changes nothing, and `dispose`
 * leaves nothing behind: no element, no listener on what stays in the page, no state or store
 * listener, no observer, no timer (a frame or a throttled recomputation still pending included).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createComparison } from './compare';
import { createInspector } from './inspector';
import { DagView } from './dag';
import { renderDetails } from './details';
import { renderLegend } from './legend';
import { MemoryPanel } from './memory';
import { setPlotlyLoader } from './plotly';
import { Scrubber } from './scrubber';
import { PlacementStore } from './store';
import { TimingPanel } from './timing';
import type { PlacementDocument } from './types';
import { ChangeCollector, type View } from './view';
import { ViewState } from './viewstate';
import { useContext } from './__tests__/canvas';
import { comparisonDocument } from './__tests__/compare-fixture';
import { fakePlotly } from './__tests__/panels-fixture';
import { golden } from './__tests__/rendered';

type MakeView = (parent: HTMLElement, store: PlacementStore, state: ViewState) => View;

/** Every view createInspector makes, as it makes them. */
const VIEWS: [string, MakeView][] = [
  ['legend', renderLegend],
  ['dag', (parent, store, state) => new DagView(parent, store, state)],
  ['details', renderDetails],
  ['scrubber', (parent, store, state) => new Scrubber(parent, store, state)],
  ['memory', (parent, store, state) => new MemoryPanel(parent, store, state)],
  ['timing', (parent, store, state) => new TimingPanel(parent, store, state)],
];

/** The op whose details are shown: in both documents, a different op. */
const SELECTED = 0;

/** Listeners added and not yet removed, per target. */
const listening = new Map<EventTarget, Set<string>>();
/** Resize, intersection and mutation observers observing and not yet disconnected. */
const observing = new Set<object>();
let plotCalls: { method: string; args: unknown[] }[] = [];

class FakeObserver {
  observe(): void {
    observing.add(this);
  }
  unobserve(): void {}
  disconnect(): void {
    observing.delete(this);
  }
}

beforeEach(() => {
  vi.useFakeTimers();
  useContext();
  const { plotly, calls } = fakePlotly();
  plotCalls = calls;
  setPlotlyLoader(() => Promise.resolve(plotly));
  vi.stubGlobal('ResizeObserver', FakeObserver);
  vi.stubGlobal('IntersectionObserver', FakeObserver);
  vi.stubGlobal('MutationObserver', FakeObserver);
  listening.clear();
  observing.clear();
  track(EventTarget.prototype);
  // jsdom's window has listener methods of its own.
  track(window);
});

/** Keep `listening` current for the listeners added and removed through `methods`' own. */
function track(methods: Pick<EventTarget, 'addEventListener' | 'removeEventListener'>): void {
  const add = methods.addEventListener;
  const remove = methods.removeEventListener;
  const ids = new WeakMap<object, number>();
  let next = 0;
  const key = (type: string, listener: unknown, options?: boolean | EventListenerOptions) => {
    const capture = typeof options === 'boolean' ? options : (options?.capture ?? false);
    const handler = listener as object;
    if (!ids.has(handler)) {
      ids.set(handler, next++);
    }
    return `${type}:${capture}:${ids.get(handler)}`;
  };
  vi.spyOn(methods, 'addEventListener').mockImplementation(function (
    this: EventTarget,
    type,
    listener,
    options,
  ) {
    const set = listening.get(this) ?? new Set<string>();
    listening.set(this, set.add(key(type, listener, options)));
    add.call(this, type, listener, options);
  });
  vi.spyOn(methods, 'removeEventListener').mockImplementation(function (
    this: EventTarget,
    type,
    listener,
    options,
  ) {
    listening.get(this)?.delete(key(type, listener, options));
    remove.call(this, type, listener, options);
  });
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  setPlotlyLoader(null);
  document.body.replaceChildren();
});

/** Let every frame, throttled recomputation and plot promise run. */
async function settle(): Promise<void> {
  await vi.advanceTimersByTimeAsync(2000);
}

/** Listeners still on the window, the document or an element still in the page. */
function listenersLeft(): string[] {
  const left: string[] = [];
  listening.forEach((keys, target) => {
    const stays = target instanceof Node ? target.isConnected : true;
    if (stays && keys.size > 0) {
      left.push(`${target instanceof Element ? target.className : String(target)}: ${[...keys]}`);
    }
  });
  return left;
}

/** What the view shows: its elements (their data attributes included) and its last plot. */
function shown(parent: HTMLElement): string {
  const plotted = plotCalls.filter((call) => call.method === 'react').pop();
  return `${new XMLSerializer().serializeToString(parent)}\n${JSON.stringify(plotted?.args.slice(1) ?? null)}`;
}

/**
 * A view of `doc` in a new element of the page, the state's selection on SELECTED; `changes()`
 * takes what changed in the store since it was last called, as the inspector collects it.
 */
function mount(make: MakeView, doc: PlacementDocument) {
  const parent = document.body.appendChild(document.createElement('div'));
  const store = PlacementStore.fromDocument(doc);
  const state = new ViewState();
  state.set({ selected: SELECTED });
  const collector = new ChangeCollector();
  store.onChange((change) => collector.add(change));
  const listeners = new Set<() => void>();
  // Count the state's and the store's listeners the view holds.
  const counting =
    <A>(subscribe: (cb: A) => () => void) =>
    (cb: A) => {
      const stop = subscribe(cb);
      const counted = () => {
        listeners.delete(counted);
        stop();
      };
      listeners.add(counted);
      return counted;
    };
  const listen = counting(state.listen.bind(state));
  const onChange = counting(store.onChange.bind(store));
  vi.spyOn(state, 'listen').mockImplementation(listen);
  vi.spyOn(store, 'onChange').mockImplementation(onChange);
  const changes = () => collector.take();
  return { parent, store, state, listeners, changes, view: make(parent, store, state) };
}

/** Make the store hold `doc` instead: its tables, then its events only. */
function replaceDocument(store: PlacementStore, doc: PlacementDocument): void {
  store.applyTables(doc);
  store.reset();
  store.appendLists(doc.events);
}

describe.each(VIEWS)('the %s view', (_, make) => {
  it('draws a changed document as a new view of it does, and again the same', async () => {
    const before = golden('mlp-training');
    const after = golden('towers');
    const fresh = mount(make, after);
    await settle();
    const expected = shown(fresh.parent);

    fresh.view.dispose();
    plotCalls.length = 0;

    const { parent, store, changes, view } = mount(make, before);
    await settle();
    expect(shown(parent)).not.toBe(expected);
    replaceDocument(store, after);
    view.update(changes());
    await settle();
    expect(shown(parent)).toBe(expected);
    view.update(changes()); // nothing new
    await settle();
    expect(shown(parent)).toBe(expected);
    view.dispose();
  });

  it('leaves nothing behind when disposed, with work still pending', async () => {
    const { parent, store, state, listeners, changes, view } = mount(make, golden('mlp-training'));
    await settle();
    expect(parent.childElementCount).toBeGreaterThan(0);
    // Two updates and a state change that a view would act on at its next frame or throttle.
    replaceDocument(store, golden('towers'));
    view.update(changes());
    store.appendLists(golden('towers').events);
    view.update(changes());
    state.set({ colour: 'time', time: 50, hovered: 1, filter: 'GPU' });
    view.dispose();
    expect(parent.childNodes).toHaveLength(0);
    expect(listenersLeft()).toEqual([]);
    expect(listeners.size).toBe(0);
    expect(observing.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    // Nothing it left listening: later changes schedule nothing and draw nothing.
    state.set({ colour: 'memory', selected: 2, run: 0 });
    replaceDocument(store, golden('cond'));
    await settle();
    expect(vi.getTimerCount()).toBe(0);
    expect(parent.childNodes).toHaveLength(0);
    view.dispose(); // a second time: nothing to do
    expect(parent.childNodes).toHaveLength(0);
  });
});

describe('the views above', () => {
  it('are every view the inspector puts in the page', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const inspector = createInspector(host, PlacementStore.fromDocument(golden('mlp-training')));
    await settle();
    const classes = (elements: Iterable<Element>) => [...elements].map((e) => e.className).sort();
    const made = [...inspector.element.querySelectorAll('[class^="placeviz-area-"]')].flatMap(
      (area) => [...area.children],
    );
    const parent = document.body.appendChild(document.createElement('div'));
    const store = PlacementStore.fromDocument(golden('mlp-training'));
    const views = VIEWS.map(([, make]) => make(parent, store, new ViewState()));
    expect(classes(made)).toEqual(classes(parent.children));
    views.forEach((view) => view.dispose());
    inspector.dispose();
  });
});

/** What hosts make of the views: one inspector, and two side by side in a comparison. */
const COMPOSED: [string, (host: HTMLElement) => { dispose(): void; store: PlacementStore }][] = [
  [
    'inspector',
    (host) => {
      const store = PlacementStore.fromDocument(golden('mlp-training'));
      const inspector = createInspector(host, store);
      return { dispose: () => inspector.dispose(), store };
    },
  ],
  [
    'comparison',
    (host) => {
      const comparison = createComparison(host, comparisonDocument());
      return { dispose: () => comparison.dispose(), store: comparison.comparison.stores[0] };
    },
  ],
];

describe.each(COMPOSED)('the %s', (_, make) => {
  it('leaves nothing behind when disposed, with frames still pending', async () => {
    const host = document.body.appendChild(document.createElement('div'));
    const { dispose, store } = make(host);
    await settle();
    expect(host.childElementCount).toBeGreaterThan(0);
    expect(observing.size).toBeGreaterThan(0);
    host.querySelector<HTMLButtonElement>('.placeviz-fit')?.click(); // a paint asked for
    store.reset(); // and the views' update
    dispose();
    expect(host.childNodes).toHaveLength(0);
    expect(listenersLeft()).toEqual([]);
    expect(observing.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
