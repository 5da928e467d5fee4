import { describe, expect, it } from 'vitest';
import {
  MIXED,
  collapseScopeOf,
  defaultCollapsed,
  expandScope,
  foldScopes,
  scopeOf,
  type FoldEdge,
} from './scopes';

const nodes = [
  { name: 'input', device: 0 },
  { name: 'tower_0/conv', device: 1 },
  { name: 'tower_0/inner/relu', device: 1 },
  { name: 'tower_1/conv', device: 1 },
  { name: 'tower_1/relu', device: 2 },
  { name: 'loss', device: 0 },
];

function edge(src: number, dst: number, extra: Partial<FoldEdge> = {}): FoldEdge {
  return { src, dst, kind: 'data', bytes: 10, crosses: false, ...extra };
}

describe('foldScopes', () => {
  it('draws every op as its own box when nothing is collapsed', () => {
    const folded = foldScopes(nodes, [edge(0, 1)], new Set());
    expect(folded.boxes.map((b) => b.name)).toEqual(nodes.map((n) => n.name));
    expect(Array.from(folded.boxOf)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(folded.edges).toEqual([{ src: 0, dst: 1, bytes: 10, crosses: false, control: false }]);
  });

  it('folds a collapsed scope, nested ops included, into one box', () => {
    const folded = foldScopes(nodes, [], new Set(['tower_0']));
    const tower = folded.boxes[folded.boxOf[1]];
    expect(tower).toEqual({ name: 'tower_0', node: -1, ops: 2, device: 1 });
    expect(folded.boxOf[2]).toBe(folded.boxOf[1]);
    expect(folded.boxes).toHaveLength(5);
    expect(folded.boxes[folded.boxOf[0]].node).toBe(0);
  });

  it('marks a folded box over several devices as mixed', () => {
    const folded = foldScopes(nodes, [], new Set(['tower_1']));
    expect(folded.boxes[folded.boxOf[3]].device).toBe(MIXED);
  });

  it('merges edges between the same boxes and drops those inside a box', () => {
    const edges = [
      edge(0, 1, { bytes: 10 }),
      edge(0, 2, { bytes: 5, crosses: true }),
      edge(1, 2, { bytes: 7 }),
      edge(2, 5, { kind: 'control', bytes: null }),
      edge(0, 2, { kind: 'control', bytes: null }),
    ];
    const folded = foldScopes(nodes, edges, new Set(['tower_0']));
    const tower = folded.boxOf[1];
    expect(folded.edges).toEqual([
      { src: folded.boxOf[0], dst: tower, bytes: 15, crosses: true, control: false },
      { src: tower, dst: folded.boxOf[5], bytes: 0, crosses: false, control: true },
    ]);
  });

  it('uses the outermost collapsed scope', () => {
    const folded = foldScopes(nodes, [], new Set(['tower_0/inner', 'tower_0']));
    expect(folded.boxes[folded.boxOf[2]].name).toBe('tower_0');
  });
});

describe('scope defaults', () => {
  it('keeps small graphs expanded', () => {
    expect(defaultCollapsed(nodes.map((n) => n.name)).size).toBe(0);
  });

  it('collapses big top-level scopes of a large graph, and their big children on expand', () => {
    const names = [
      ...Array.from({ length: 15_000 }, (_, i) => `big/part${i % 2}/op${i}`),
      ...Array.from({ length: 6_000 }, (_, i) => `small${i % 10}/op${i}`),
      'top',
    ];
    const collapsed = defaultCollapsed(names);
    expect([...collapsed]).toEqual(['big']);
    const expanded = expandScope(names, collapsed, 'big');
    expect([...expanded].sort()).toEqual(['big/part0', 'big/part1']);
  });

  it('folds an op back into its scope', () => {
    expect([...collapseScopeOf('tower_0/inner/relu', new Set())]).toEqual(['tower_0/inner']);
    expect(collapseScopeOf('top', new Set()).size).toBe(0);
    expect(scopeOf('a/b/c')).toBe('a/b');
  });
});
