import { describe, expect, it } from 'vitest';
import { normalizeDocument } from './normalize';
import { EventKind, TimingSource } from './types';

const tables = { devices: [], nodes: [], edges: [], runs: [] };

describe('normalizeDocument', () => {
  it("reads event kinds and timing sources by the document's own tables", () => {
    const doc = {
      ...tables,
      // Another version's numbering: op is 0, run is 7, and a kind this version does not know.
      event_kinds: { '0': 'op', '7': 'run', '9': 'checkpoint' },
      timing_sources: { '0': 'modeled', '1': 'cuda-event' },
      events: { kind: [0, 7, 9], source: [0, 1, 0] },
    };
    const { events } = normalizeDocument(doc);
    expect(events.kind).toEqual([EventKind.OP, EventKind.RUN, -1]);
    expect(events.source).toEqual([
      TimingSource.MODELED,
      TimingSource.CUDA_EVENT,
      TimingSource.MODELED,
    ]);
  });

  it("keeps the columns as they are when the document's tables are this version's", () => {
    const kind = [EventKind.RUN, EventKind.OP, EventKind.FREE];
    const doc = {
      ...tables,
      event_kinds: Object.fromEntries(
        Object.entries(EventKind).map(([name, code]) => [String(code), name.toLowerCase()]),
      ),
      events: { kind },
    };
    expect(normalizeDocument(doc).events.kind).toBe(kind);
  });

  it("carries a what-if's question, and reads an empty or missing one as a measured trace", () => {
    expect(
      normalizeDocument({ ...tables, prediction: 'what if GPU:1 were an A100?' }).prediction,
    ).toBe('what if GPU:1 were an A100?');
    for (const prediction of [null, undefined, '', '  ', 7]) {
      expect(normalizeDocument({ ...tables, prediction }).prediction).toBeNull();
    }
  });

  it("keeps a cost-model placer's reason kind", () => {
    const doc = {
      ...tables,
      nodes: [{ id: 0, name: 'a', reason: { kind: 'cost', text: 'fastest on GPU:0' } }],
    };
    expect(normalizeDocument(doc).tables.nodes[0].reason).toEqual({
      kind: 'cost',
      text: 'fastest on GPU:0',
      anchor: null,
    });
  });
});
