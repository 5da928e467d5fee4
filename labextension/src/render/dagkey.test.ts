// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { renderKey } from './dagkey';
import type { BoxColours } from './dagcolour';
import { MARKS, type MarkId } from './dagmarks';
import type { DagTheme } from './dagpaint';

const theme: DagTheme = {
  foreground: 'rgb(33, 33, 33)',
  muted: 'rgb(117, 117, 117)',
  background: 'rgb(255, 255, 255)',
  container: 'rgb(240, 240, 240)',
  edge: 'rgb(158, 158, 158)',
  transfer: 'rgb(170, 0, 120)',
  accent: 'rgb(25, 118, 210)',
  mismatch: 'rgb(200, 0, 0)',
  running: 'rgb(255, 160, 0)',
  marked: 'rgb(0, 150, 136)',
  loop: 'rgb(0, 121, 107)',
};
const NO_RANGE = { range: null } as unknown as BoxColours;

function keyed(used: Iterable<MarkId>): HTMLElement {
  const root = document.createElement('div');
  renderKey(root, 'device', NO_RANGE, theme, new Set(used));
  return root;
}

describe('renderKey', () => {
  it('lists exactly the marks the graph uses, in the order of MARKS, with their texts', () => {
    const used: MarkId[] = ['running', 'simulated', 'transfer', 'folded'];
    const root = keyed(used);
    const listed = [...root.querySelectorAll<HTMLElement>('[data-mark]')].map(
      (i) => i.dataset.mark,
    );
    expect(listed).toEqual(MARKS.map((m) => m.id).filter((id) => used.includes(id)));
    const texts = [...root.querySelectorAll('.placeviz-key-text')].map((t) => t.textContent);
    expect(texts).toContain('dashed: on a simulated device');
    expect(keyed([]).querySelectorAll('[data-mark]').length).toBe(0);
  });

  it('draws each mark as the graph does: dashed simulated ops, dotted control edges, red failures', () => {
    const root = keyed(MARKS.map((m) => m.id));
    const drawn = (id: MarkId) =>
      root.querySelector<HTMLElement>(`[data-mark="${id}"] > :first-child`)!.style;
    expect(drawn('simulated').border).toBe(`2px dashed ${theme.foreground}`);
    expect(drawn('transfer').borderTop).toBe(`3px dashed ${theme.transfer}`);
    expect(drawn('control').borderTop).toBe(`1px dotted ${theme.edge}`);
    expect(drawn('network').borderTop).toBe(`4px dotted ${theme.transfer}`);
    expect(drawn('failed').border).toBe(`4px solid ${theme.mismatch}`);
    expect(drawn('mismatch').border).toBe(`3px solid ${theme.mismatch}`);
    expect(drawn('marked').border).toBe(`3px solid ${theme.marked}`);
    // Every mark has an entry of its own.
    expect(root.querySelectorAll('[data-mark]').length).toBe(MARKS.length);
  });
});
