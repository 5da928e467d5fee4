// @vitest-environment jsdom
/**
 * CARD_MEMORY rows (a GPU card's own NVML reading) are for the memory panel only: every other
 * consumer of the events (activity, op states, the timing model and panel, the store's end time)
 * must read a document with them as it reads the same document without them. So must a kind this
 * version does not know.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RunActivity } from './activity';
import { EventColumns } from './events';
import { normalizeDocument } from './normalize';
import { setPlotlyLoader } from './plotly';
import { PlacementStore } from './store';
import { TimingPanel } from './timing';
import { computeTiming } from './timingmodel';
import { EventKind, type PlacementDocument } from './types';
import { ViewState } from './viewstate';
import { columns } from './__tests__/fixtures';
import { fakePlotly, panelsDocument } from './__tests__/panels-fixture';

const GiB = 1024 ** 3;

type Row = [number, number, number, number, number, number, number, number, number, number];

/** The panels document plus `rows` (kind, t0, t1, node, device, stream, bytes, source, run, peer). */
function withRows(rows: Row[]): PlacementDocument {
  const doc = panelsDocument();
  const more = columns(rows);
  for (const name of Object.keys(more) as (keyof typeof more)[]) {
    doc.events[name] = [...doc.events[name], ...more[name]];
  }
  return doc;
}

/**
 * GPU:0's card (device 1) read at the run's start and end and every 10 ns between, plus one
 * sample a little after the run ended and one before it started (a sampler's clock is its own).
 */
function cardRows(): Row[] {
  const rows: Row[] = [];
  for (const t of [-7, 0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 130]) {
    rows.push([EventKind.CARD_MEMORY, t, t, -1, 1, 1, 40 * GiB + t, 1, 0, -1]);
  }
  return rows;
}

/** Rows of a kind this version does not know, shaped like ops of known nodes. */
function unknownRows(): Row[] {
  return [
    [7, 5, 500, 1, 1, 0, 123, 1, 0, -1],
    [7, 200, 900, 2, 2, 0, 456, 1, 0, 1],
  ];
}

afterEach(() => setPlotlyLoader(null));

describe.each([
  ['CARD_MEMORY', cardRows],
  ['an unknown kind', unknownRows],
])('the other consumers ignore %s rows', (_, rows) => {
  const plain = () => PlacementStore.fromDocument(panelsDocument());
  const extra = () => PlacementStore.fromDocument(withRows(rows()));

  it('activity: the same run spans, extent and time axis', () => {
    const a = plain().activity();
    const b = extra().activity();
    expect(b.spans).toEqual(a.spans);
    expect(b.extent).toEqual(a.extent);
    expect(b.activeExtent).toEqual(a.activeExtent);
    expect(b.timeAxis.windows).toEqual(a.timeAxis.windows);
  });

  it('activity: card rows alone are no activity and no memory extent', () => {
    const events = new EventColumns();
    events.appendLists(columns(rows()));
    const activity = new RunActivity();
    activity.update(events);
    expect(activity.spans.size).toBe(0);
    expect(activity.extent).toBeNull();
  });

  it('the store: the same end time, op spans and op states', () => {
    const a = plain();
    const b = extra();
    expect(b.events.count).toBeGreaterThan(a.events.count);
    expect(b.endTime()).toBe(a.endTime());
    expect(b.opSpans()).toEqual(a.opSpans());
    for (const t of [null, 0, 5, 35, 100, 130]) {
      const outA = new Uint8Array(a.nodes.length);
      const outB = new Uint8Array(b.nodes.length);
      a.stateAt(t, outA);
      b.stateAt(t, outB);
      expect(Array.from(outB), String(t)).toEqual(Array.from(outA));
    }
  });

  it('the timing model: the same lanes, bars and busy time', () => {
    const a = plain();
    const b = extra();
    const ma = computeTiming(a.events, a.devices);
    const mb = computeTiming(b.events, b.devices);
    expect(mb.opBars).toBe(ma.opBars);
    expect(mb.lanes.map((l) => [l.kind, l.device, l.stream, l.bars.length])).toEqual(
      ma.lanes.map((l) => [l.kind, l.device, l.stream, l.bars.length]),
    );
    expect(mb.span()).toBe(ma.span());
    expect(mb.utilisation(mb.span())).toEqual(ma.utilisation(ma.span()));
  });

  it('the timing panel: the same bars drawn', async () => {
    const { plotly, calls } = fakePlotly();
    setPlotlyLoader(() => Promise.resolve(plotly));
    const draw = async (store: PlacementStore) => {
      const parent = document.createElement('div');
      const panel = new TimingPanel(parent, store, new ViewState(), { throttleMs: 0 });
      await new Promise((resolve) => setTimeout(resolve, 0));
      const plot = panel.element.querySelector('.placeviz-plot');
      const react = calls.filter((c) => c.method === 'react' && c.args[0] === plot).pop()!;
      const result = {
        bars: panel.element.dataset.bars,
        lanes: panel.element.dataset.lanes,
        traces: JSON.stringify(react.args[1]),
        layout: JSON.stringify(react.args[2]),
      };
      panel.dispose();
      return result;
    };
    const a = await draw(plain());
    const b = await draw(extra());
    expect(a.bars).toBe('4');
    expect(b).toEqual(a);
  });
});

describe('reading CARD_MEMORY from a document', () => {
  it("maps the document's own code for 'card_memory' to this version's", () => {
    const doc = {
      devices: [],
      nodes: [],
      edges: [],
      runs: [],
      event_kinds: { '0': 'run', '2': 'op', '11': 'card_memory' },
      events: { kind: [0, 2, 11] },
    };
    expect(normalizeDocument(doc).events.kind).toEqual([
      EventKind.RUN,
      EventKind.OP,
      EventKind.CARD_MEMORY,
    ]);
  });
});
