import { describe, expect, it } from 'vitest';
import { findOp, matchOps } from './search';
import { PlacementStore } from './store';
import { node, smallDocument } from './__tests__/fixtures';

function store(names: string[]): PlacementStore {
  const doc = smallDocument();
  doc.nodes = names.map((name, id) => node(id, name, { device: 0, type: 'Fill' }));
  doc.edges = [];
  return PlacementStore.fromDocument(doc);
}

describe('findOp', () => {
  it('prefers the op named exactly over one made before whose name contains it', () => {
    const ops = store(['grad_ys_0/Const', 'grad_ys_0', 'grad_ys_0/other']);
    expect(findOp(ops, 'grad_ys_0')).toBe(1);
    expect(findOp(ops, ' GRAD_YS_0 ')).toBe(1);
    expect(findOp(ops, 'grad_ys')).toBe(0); // no exact name: the first that contains it
    expect(findOp(ops, 'fill')).toBe(0); // by type
    expect(findOp(ops, 'nothing like it')).toBeNull();
  });

  it('filters every op whose name contains the text', () => {
    const ops = store(['grad_ys_0/Const', 'grad_ys_0', 'loss']);
    expect([...matchOps(ops, 'grad_ys_0')!]).toEqual([1, 1, 0]);
  });
});
