import { describe, expect, it } from 'vitest';
import { buildDagModel } from './dagmodel';
import { LIVE_RUNNING } from './dagcolour';
import { MARKS, marksUsed } from './dagmarks';
import { PlacementStore } from './store';
import { SIM, device, node, smallDocument } from './__tests__/fixtures';

/** smallDocument (a transfer, a request not honoured) plus an op on a simulated GPU and a
 * control edge. */
function document() {
  const doc = smallDocument();
  doc.devices.push(device(3, SIM, { kind: 'simulated' }));
  doc.nodes.push(node(3, 'd', { device: 3 }));
  doc.edges.push({ src: 2, dst: 3, kind: 'control', bytes: null, crosses: true });
  return doc;
}

describe('marksUsed', () => {
  it('finds every mark a paint of the graph draws, and no other', () => {
    const store = PlacementStore.fromDocument(document());
    const open = buildDagModel(store, new Set(['tower_0']));
    const none = { alerts: null, marked: null, live: null };
    expect([...marksUsed(open, none)].sort()).toEqual(
      ['transfer', 'control', 'simulated', 'opened', 'mismatch'].sort(),
    );
    // Folded, tower_0 is a box with a heavy outline; its edges summarized still cross.
    const folded = buildDagModel(store, new Set());
    expect(marksUsed(folded, none)).toEqual(
      new Set(['transfer', 'control', 'simulated', 'folded', 'mismatch']),
    );
    const boxes = open.folded.boxes.length;
    const one = () => Uint8Array.from({ length: boxes }, (_, b) => (b === 0 ? 1 : 0));
    const running = Uint8Array.from({ length: boxes }, (_, b) => (b === 0 ? LIVE_RUNNING : 0));
    const all = marksUsed(open, { alerts: one(), marked: one(), live: running });
    for (const id of ['failed', 'marked', 'running'] as const) {
      expect(all.has(id)).toBe(true);
    }
  });

  it('declares each mark once, each with a text for the key', () => {
    expect(new Set(MARKS.map((m) => m.id)).size).toBe(MARKS.length);
    expect(MARKS.every((m) => m.text.length > 0)).toBe(true);
  });
});
