import { describe, expect, it } from 'vitest';
import { layoutDag } from './layout';

/** A layered random DAG: edges go from lower to higher indices, mostly to nearby nodes. */
function randomDag(nodes: number, edges: number, seed = 1): { src: number; dst: number }[] {
  let state = seed;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const result: { src: number; dst: number }[] = [];
  while (result.length < edges) {
    const dst = 1 + Math.floor(random() * (nodes - 1));
    const reach = Math.min(dst, 1 + Math.floor(random() * 50));
    result.push({ src: dst - 1 - Math.floor(random() * reach), dst });
  }
  return result;
}

function positions(layout: { x: Float32Array; y: Float32Array }): Set<string> {
  const seen = new Set<string>();
  for (let i = 0; i < layout.x.length; i++) {
    seen.add(`${layout.x[i]},${layout.y[i]}`);
  }
  return seen;
}

describe('layoutDag', () => {
  it('puts every edge of an acyclic graph into a later layer', () => {
    const edges = randomDag(2000, 3000);
    const layout = layoutDag(2000, edges);
    for (const { src, dst } of edges) {
      expect(layout.layer[dst]).toBeGreaterThan(layout.layer[src]);
      expect(layout.y[dst]).toBeGreaterThan(layout.y[src]);
    }
  });

  it('gives no two nodes the same position', () => {
    const layout = layoutDag(3000, randomDag(3000, 4500, 7));
    expect(positions(layout).size).toBe(3000);
  });

  it('keeps nodes within the reported bounds', () => {
    const layout = layoutDag(500, randomDag(500, 800, 3), { nodeWidth: 50, nodeHeight: 10 });
    for (let i = 0; i < 500; i++) {
      expect(layout.x[i]).toBeGreaterThanOrEqual(0);
      expect(layout.x[i] + 50).toBeLessThanOrEqual(layout.width + 1e-3);
      expect(layout.y[i] + 10).toBeLessThanOrEqual(layout.height + 1e-3);
    }
  });

  it('lays out a chain as one column of layers', () => {
    const layout = layoutDag(4, [
      { src: 0, dst: 1 },
      { src: 1, dst: 2 },
      { src: 2, dst: 3 },
    ]);
    expect(Array.from(layout.layer)).toEqual([0, 1, 2, 3]);
    expect(layout.layers).toBe(4);
    expect(new Set(layout.x).size).toBe(1);
  });

  it('places a source next to its consumer rather than at the top', () => {
    // 0 -> 1 -> 2 -> 3, and 4 (a constant) feeds only 3.
    const layout = layoutDag(5, [
      { src: 0, dst: 1 },
      { src: 1, dst: 2 },
      { src: 2, dst: 3 },
      { src: 4, dst: 3 },
    ]);
    expect(layout.layer[4]).toBe(2);
  });

  it('tolerates cycles and self-loops', () => {
    const layout = layoutDag(3, [
      { src: 0, dst: 1 },
      { src: 1, dst: 2 },
      { src: 2, dst: 0 },
      { src: 1, dst: 1 },
    ]);
    expect(new Set(layout.layer).size).toBe(3);
    expect(positions(layout).size).toBe(3);
  });

  it('handles an empty graph', () => {
    const layout = layoutDag(0, []);
    expect(layout.width).toBe(0);
    expect(layout.height).toBe(0);
  });

  it('lays out 100,000 ops and 150,000 edges, each at a place of its own', () => {
    // how fast: benchmarks/bench_first_paint.py (a time here would fail on a busy machine)
    const edges = randomDag(100_000, 150_000, 11);
    const layout = layoutDag(100_000, edges);
    expect(layout.x.length).toBe(100_000);
    const places = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      expect(Number.isFinite(layout.x[i]) && Number.isFinite(layout.y[i])).toBe(true);
      places.add(`${layout.x[i]},${layout.y[i]}`);
    }
    expect(places.size).toBe(100_000);
  });
});
