import { describe, expect, it } from 'vitest';
import { readComparison } from './comparedoc';
import {
  deviceColumns,
  deviceRows,
  missingMemory,
  movedLines,
  stepSummary,
} from './comparesummary';
import { MOVED_LISTED } from './types';
import { CPU, GPU0, GPU1 } from './__tests__/fixtures';
import { comparisonDocument } from './__tests__/compare-fixture';

const MINUS = '\u2212';

describe('stepSummary', () => {
  it('gives each step time and the change, signed, in time and percent of the first', () => {
    const labels: [string, string] = ['simple', 'cost'];
    expect(stepSummary({ labels, stepNs: [4.1e6, 2.3e6] })).toBe(
      `step: simple 4.10 ms · cost 2.30 ms · ${MINUS}1.80 ms (${MINUS}44%)`,
    );
    expect(stepSummary({ labels, stepNs: [2e6, 3e6] })).toBe(
      'step: simple 2.00 ms · cost 3.00 ms · +1.00 ms (+50%)',
    );
    expect(stepSummary({ labels, stepNs: [1000e3, 1004e3] })).toBe(
      'step: simple 1.00 ms · cost 1.00 ms · +4.0 µs (+0.4%)',
    );
    expect(stepSummary({ labels, stepNs: [500, 500] })).toBe(
      'step: simple 500 ns · cost 500 ns · 0 ns (0%)',
    );
    // No percent of nothing; no difference with an unknown side.
    expect(stepSummary({ labels, stepNs: [0, 500] })).toBe(
      'step: simple 0 ns · cost 500 ns · +500 ns',
    );
    expect(stepSummary({ labels, stepNs: [NaN, 500] })).toBe('step: simple n/a · cost 500 ns');
  });
});

describe('deviceRows', () => {
  it('gives per device its short name, then ops, busy time and peak memory, each side and the change', () => {
    const { devices } = comparisonDocument();
    expect(deviceColumns(['simple', 'cost'])).toEqual([
      'device',
      ...['simple', 'cost', 'Δ'],
      ...['simple', 'cost', 'Δ'],
      ...['simple', 'cost', 'Δ'],
    ]);
    expect(deviceRows(devices)).toEqual([
      ['CPU:0', '1', '1', '0', '10 ns', '10 ns', '0 ns', '24 B', '24 B', '0 B'],
      ['GPU:0', '1', '2', '+1', '30 ns', '50 ns', '+20 ns', '24 B', '3.00 MiB', '+3.00 MiB'],
      [
        'GPU:1',
        '1',
        '0',
        `${MINUS}1`,
        '60 ns',
        '0 ns',
        `${MINUS}60 ns`,
        '24 B',
        '0 B',
        `${MINUS}24 B`,
      ],
    ]);
    // A cluster task's device keeps its job and task.
    const worker = '/job:worker/replica:0/task:1/device:GPU:0';
    const rows = deviceRows([{ device: worker, ops: [0, 3], busy_ns: [0, 0], peak_bytes: [0, 0] }]);
    expect(rows[0][0]).toBe('worker/1 GPU:0');
  });
});

describe('missing memory', () => {
  it('reads "not modeled" for a what-if that modeled none, never 0 B or a saving', () => {
    const doc = comparisonDocument();
    doc.devices = [
      { device: GPU0, ops: [2, 2], busy_ns: [30, 20], peak_bytes: [21_495_808, null] },
    ];
    const comparison = readComparison(doc);
    const [row] = deviceRows(comparison.devices, missingMemory(comparison));
    expect(row.slice(7)).toEqual(['20.5 MiB', 'not modeled', 'n/a']);
    // A run that was not fully traced recorded none either: its side says so.
    doc.devices[0].peak_bytes = [null, 1024];
    doc.documents[1].prediction = undefined;
    const traced = readComparison(doc);
    expect(deviceRows(traced.devices, missingMemory(traced))[0].slice(7)).toEqual([
      'not traced',
      '1.00 KiB',
      'n/a',
    ]);
  });
});

describe('movedLines', () => {
  it('lists the first MOVED_LISTED moved ops with their short devices, then counts the rest', () => {
    expect(movedLines([{ name: 'MatMul_3', from: GPU0, to: GPU1 }])).toEqual([
      'MatMul_3: GPU:0 → GPU:1',
    ]);
    const moved = Array.from({ length: MOVED_LISTED + 7 }, (_, i) => ({
      name: `op_${i}`,
      from: CPU,
      to: i % 2 ? GPU0 : '',
    }));
    const lines = movedLines(moved);
    expect(lines).toHaveLength(MOVED_LISTED + 1);
    expect(lines[0]).toBe('op_0: CPU:0 → not placed');
    expect(lines[1]).toBe('op_1: CPU:0 → GPU:0');
    expect(lines[MOVED_LISTED - 1]).toBe(`op_${MOVED_LISTED - 1}: CPU:0 → GPU:0`);
    expect(lines[MOVED_LISTED]).toBe('and 7 more');
    expect(movedLines(moved.slice(0, MOVED_LISTED))).toHaveLength(MOVED_LISTED);
    expect(movedLines([])).toEqual([]);
  });
});

describe('readComparison', () => {
  it('reads both placements into stores, and fills what is missing', () => {
    const comparison = readComparison(comparisonDocument());
    expect(comparison.labels).toEqual(['simple', 'cost']);
    expect(comparison.stores.map((s) => s.nodes.length)).toEqual([3, 3]);
    expect(comparison.stores[1].prediction).toBe('what if the cost-model placer placed it?');
    expect(comparison.stepNs).toEqual([100, 60]);
    const sparse = comparisonDocument() as unknown as Record<string, unknown>;
    delete sparse.step_ns;
    delete sparse.labels;
    sparse.moved = [{ name: 'x' }, 'junk', { from: GPU0 }];
    sparse.devices = [{ device: GPU0, ops: [2] }, { ops: [1, 1] }];
    const filled = readComparison(sparse);
    expect(filled.labels).toEqual(['first', 'second']);
    expect(filled.stepNs).toEqual([100, 60]); // each one's last run
    expect(filled.moved).toEqual([{ name: 'x', from: '', to: '' }]);
    expect(filled.devices).toEqual([
      { device: GPU0, ops: [2, 0], busy_ns: [0, 0], peak_bytes: [0, 0] },
    ]);
  });

  it('says why a document cannot be shown', () => {
    expect(() => readComparison(null)).toThrow(/expected a JSON object/);
    expect(() => readComparison({ ...comparisonDocument(), schema: 'placeviz/1' })).toThrow(
      /schema "placeviz\/1" is not placeviz-compare\/1/,
    );
    const one = comparisonDocument();
    one.documents = one.documents.slice(0, 1);
    expect(() => readComparison(one)).toThrow(/two placement documents/);
    const broken = comparisonDocument() as unknown as { documents: unknown[] };
    broken.documents[1] = { devices: 'nope', nodes: [] };
    expect(() => readComparison(broken)).toThrow(/comparison: cost: .*devices/);
  });
});
