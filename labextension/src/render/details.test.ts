// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { renderDetails } from './details';
import { PlacementStore } from './store';
import { ViewState } from './viewstate';
import { GPU0, smallDocument } from './__tests__/fixtures';
import { EVERYTHING } from './__tests__/follow';

const EVIL = '<img src=x onerror=alert(1)>';

function setup() {
  const doc = smallDocument();
  doc.nodes[1].name = EVIL;
  doc.nodes[1].reason = { kind: 'soft', text: 'GPU:1 <b>busy</b>, soft placement', anchor: null };
  doc.nodes[1].source = 'model.py:42';
  doc.runs[1].error = `boom\u202e\n\t[[node '${EVIL}' (MatMul)]]`;
  const store = PlacementStore.fromDocument(doc);
  const state = new ViewState();
  const parent = document.createElement('div');
  document.body.append(parent);
  const details = renderDetails(parent, store, state);
  const text = (selector: string) => parent.querySelector(selector)?.textContent ?? null;
  return { store, state, parent, details, text };
}

afterEach(() => {
  document.body.replaceChildren();
});

describe('renderDetails', () => {
  it('gives the error as the reason of a failed op, and says an unplaced op was not placed', () => {
    const { store, state, parent, text } = setup();
    state.set({ selected: 1 }); // run 1 failed in it
    expect(text('.placeviz-reason-failed')).toBe('failed');
    // An error keeps its line break and tab (laid out as lines), not a bidirectional override.
    expect(text('.placeviz-reason-error')).toBe(
      `run 2: boom\\u202e\n\t[[node '${EVIL}' (MatMul)]]`,
    );
    state.set({ selected: 0 });
    expect(parent.querySelector('.placeviz-reason-failed')).toBeNull();
    const doc = smallDocument();
    doc.nodes[2].device = null;
    doc.nodes[2].reason = null;
    store.applyTables(doc);
    state.set({ selected: 2 });
    expect(text('.placeviz-reason-failed')).toBe('not placed');
    expect(text('.placeviz-reason-error')).toMatch(/^no device/);
  });

  it('gives the placement error of an op that could not be placed as its reason, as text', () => {
    const { store, state, parent, text } = setup();
    const doc = smallDocument();
    const error =
      `Cannot assign a device for operation '${EVIL}' (AddV2, created at Cell In[3], line 5): ` +
      "Could not satisfy explicit device specification '/device:GPU:7'";
    doc.nodes[2].device = null;
    doc.nodes[2].reason = { kind: 'unplaced', text: error, anchor: null };
    store.applyTables(doc);
    state.set({ selected: 2 });
    expect(text('.placeviz-reason-failed')).toBe('placement failed');
    expect(text('.placeviz-reason-error')).toBe(error);
    // The error is the only reason: no "placed" row repeats it under another kind.
    expect(parent.querySelectorAll('.placeviz-reason-kind')).toHaveLength(1);
    expect(parent.querySelector('img')).toBeNull();
    expect(parent.textContent).toContain('not placed'); // assigned
  });

  it('shows an empty state until an op is selected', () => {
    const { parent, text } = setup();
    expect(parent.querySelector('.placeviz-details')).not.toBeNull();
    expect(text('.placeviz-details-empty')).toMatch(/Click an op/);
    expect(text('.placeviz-details-name')).toBeNull();
  });

  it('shows the selected op, its reason and devices as literal text', () => {
    const { state, parent, text } = setup();
    state.set({ selected: 1 });
    expect(text('.placeviz-details-name')).toBe(EVIL);
    // it failed in run 1: the error comes first, then where it was placed and why
    expect(text('.placeviz-reason:not(.placeviz-reason-error)')).toBe(
      'GPU:1 <b>busy</b>, soft placement',
    );
    expect(text('.placeviz-reason-kind:not(.placeviz-reason-failed)')).toBe('soft');
    expect(parent.querySelector('img, b')).toBeNull();
    const all = parent.textContent ?? '';
    expect(all).toContain('/device:GPU:1'); // requested
    expect(all).toContain(GPU0); // assigned
    expect(all).toContain('(2, 3)');
    expect(all).toContain('float32');
    expect(text('.placeviz-details-source')).toBe('model.py:42');
  });

  it("shows a cost-model placer's reason with its kind, from the document", () => {
    const doc = smallDocument();
    doc.nodes[2].reason = {
      kind: 'cost',
      text: 'the simulation finishes the graph first with it on GPU:1',
      anchor: null,
    };
    const store = PlacementStore.fromDocument(doc);
    const state = new ViewState();
    const parent = document.body.appendChild(document.createElement('div'));
    renderDetails(parent, store, state);
    state.set({ selected: 2 });
    const kind = parent.querySelector<HTMLElement>('.placeviz-reason-kind')!;
    expect(kind.textContent).toBe('cost');
    expect(kind.dataset.kind).toBe('cost');
    expect(parent.querySelector('.placeviz-reason')!.textContent).toBe(
      'the simulation finishes the graph first with it on GPU:1',
    );
    expect(parent.querySelector('.placeviz-reason-failed')).toBeNull();
  });

  it('draws the timeline bar of the latest run, marked failed', () => {
    const { state, parent } = setup();
    state.set({ selected: 1 });
    const bar = parent.querySelector<HTMLElement>('.placeviz-details-bar')!;
    // run 1 spans 200..300; the op ran 220..300
    expect(bar.style.left).toBe('20%');
    expect(bar.style.width).toBe('80%');
    expect(bar.classList.contains('placeviz-details-bar-failed')).toBe(true);
  });

  it('selects an input or output op on click', () => {
    const { state, parent, text } = setup();
    state.set({ selected: 1 });
    const links = [...parent.querySelectorAll<HTMLElement>('.placeviz-details-op')];
    expect(links.map((l) => l.textContent)).toEqual(['a', 'tower_0/c']);
    links[1].click();
    expect(state.get('selected')).toBe(2);
    expect(text('.placeviz-details-name')).toBe('tower_0/c');
  });

  it('says why an op whose outputs nothing read did not run', () => {
    const { store, state, details, parent } = setup();
    const doc = smallDocument();
    const last = doc.runs.length - 1;
    doc.runs[last].unread = [0];
    store.reset();
    store.applyTables(doc);
    state.set({ selected: 0 });
    details.update(EVERYTHING);
    expect(parent.textContent).toContain(
      `ran as a NoOp in run ${doc.runs[last].id + 1}: nothing in the run reads its outputs`,
    );
    state.set({ selected: 2 });
    details.update(EVERYTHING);
    expect(parent.textContent).toContain('has not run');
  });

  it('says that an op folded into a constant was computed once', () => {
    const doc = smallDocument();
    doc.runs[doc.runs.length - 1].folded = [0];
    const store = PlacementStore.fromDocument(doc);
    const state = new ViewState();
    const parent = document.body.appendChild(document.createElement('div'));
    renderDetails(parent, store, state);
    state.set({ selected: 0 });
    expect(parent.textContent).toContain('folded into a constant');
    state.set({ selected: 1 });
    expect(parent.textContent).not.toContain('folded into a constant');
  });

  it('says when an op has not run', () => {
    const { store, state, details, parent } = setup();
    store.reset();
    state.set({ selected: 0 });
    details.update(EVERYTHING);
    expect(parent.textContent).toContain('has not run');
    expect(parent.querySelector('.placeviz-details-bar')).toBeNull();
  });
});
