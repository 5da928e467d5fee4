/**
 * The comparison's summary, above its two inspectors: each step time and the difference, one row
 * per device (ops, busy time, peak memory under each placement and the change), and the ops that
 * moved, the first MOVED_LISTED of them listed. Text only: labels and names are untrusted.
 */
import type { Comparison } from './comparedoc';
import type { DeviceDelta, MovedOp } from './contract.gen';
import { MOVED_LISTED } from './types';
import { element } from './dom';
import { formatBytes, formatNs, shortDeviceName } from './format';
import { visibleText } from './visible';

const MINUS = '\u2212';

/** `format(|value|)` with its sign: "+1.20 ms", "−3", "0". */
function signed(value: number, format: (v: number) => string): string {
  if (!Number.isFinite(value)) {
    return 'n/a';
  }
  const text = format(Math.abs(value));
  return value > 0 ? `+${text}` : value < 0 ? `${MINUS}${text}` : text;
}

/** A change in percent of `before`: "−44%", "+0.4%", "0%"; '' when `before` is not positive. */
function percent(before: number, after: number): string {
  if (!(before > 0) || !Number.isFinite(after)) {
    return '';
  }
  const change = ((after - before) / before) * 100;
  const size = Math.abs(change);
  const rounded = size >= 1 ? String(Math.round(size)) : size.toFixed(1);
  return rounded === '0.0' ? '0%' : signed(change, () => rounded) + '%';
}

/**
 * "step: simple 4.10 ms · cost 2.30 ms · −1.80 ms (−44%)": each step time and the second's
 * change from the first.
 */
export function stepSummary(comparison: Pick<Comparison, 'labels' | 'stepNs'>): string {
  const [a, b] = comparison.stepNs;
  const [first, second] = comparison.labels;
  const parts = [`step: ${first} ${formatNs(a)}`, `${second} ${formatNs(b)}`];
  if (Number.isFinite(a) && Number.isFinite(b)) {
    const change = percent(a, b);
    parts.push(`${signed(b - a, formatNs)}${change ? ` (${change})` : ''}`);
  }
  return parts.join(' · ');
}

/** The device table's column heads, under the group heads ops, busy, peak memory. */
export function deviceColumns(labels: readonly [string, string]): string[] {
  const sides = [labels[0], labels[1], 'Δ'];
  return ['device', ...sides, ...sides, ...sides];
}

/** What a side's peak memory reads when it recorded none: a what-if models times only. */
export const NOT_MODELED = 'not modeled';
/** ... and a run that was not fully traced recorded no memory events. */
export const NOT_TRACED = 'not traced';

/** Per side, what its missing memory reads: NOT_MODELED for a prediction, else NOT_TRACED. */
export function missingMemory(comparison: Pick<Comparison, 'stores'>): [string, string] {
  const word = (side: number) =>
    comparison.stores[side].prediction === null ? NOT_TRACED : NOT_MODELED;
  return [word(0), word(1)];
}

/**
 * One row per device: its short name, then ops, busy time (in the last run) and peak memory,
 * each as [first, second, second − first]; a side with no peak (null) reads `missing` for it,
 * and the change then reads "n/a", never a saving.
 */
export function deviceRows(
  devices: readonly DeviceDelta[],
  missing: readonly [string, string] = [NOT_TRACED, NOT_TRACED],
): string[][] {
  const count = (n: number) => n.toLocaleString('en-US');
  return devices.map((d) => {
    const cells = [shortDeviceName(d.device)];
    const metric = (values: (number | null)[], format: (v: number) => string) => {
      const [a, b] = values;
      cells.push(
        a === null ? missing[0] : format(a),
        b === null ? missing[1] : format(b),
        a === null || b === null ? 'n/a' : signed(b - a, format),
      );
    };
    metric(d.ops, count);
    metric(d.busy_ns, formatNs);
    metric(d.peak_bytes, formatBytes);
    return cells;
  });
}

/** "MatMul_3: GPU:0 → GPU:1" for the first `limit` moved ops, then "and N more". */
export function movedLines(moved: readonly MovedOp[], limit: number = MOVED_LISTED): string[] {
  const device = (name: string) => (name === '' ? 'not placed' : shortDeviceName(name));
  const lines = moved
    .slice(0, limit)
    .map((op) => `${op.name}: ${device(op.from)} → ${device(op.to)}`);
  if (moved.length > limit) {
    lines.push(`and ${(moved.length - limit).toLocaleString('en-US')} more`);
  }
  return lines;
}

/** The summary's element: title, step line, device table and moved ops, all as text. */
export function comparisonSummary(doc: Document, comparison: Comparison): HTMLElement {
  const root = element(doc, 'div', 'placeviz-compare-summary');
  const [first, second] = comparison.labels;
  const step = element(doc, 'div', 'placeviz-compare-step', stepSummary(comparison));
  const [a, b] = comparison.stepNs;
  if (Number.isFinite(a) && Number.isFinite(b) && a !== b) {
    step.classList.add(b < a ? 'placeviz-compare-faster' : 'placeviz-compare-slower');
  }
  root.append(
    element(doc, 'div', 'placeviz-compare-title', `placeviz · ${first} vs ${second}`),
    step,
  );
  if (comparison.devices.length > 0) {
    const table = element(doc, 'table', 'placeviz-compare-devices');
    const head = element(doc, 'thead', '');
    const groups = element(doc, 'tr', 'placeviz-compare-groups');
    groups.append(element(doc, 'th', '', ''));
    for (const name of ['ops', 'busy (last run)', 'peak memory']) {
      const th = element(doc, 'th', 'placeviz-compare-group', name);
      th.colSpan = 3;
      groups.append(th);
    }
    const columns = element(doc, 'tr', 'placeviz-compare-columns-head');
    columns.append(...deviceColumns(comparison.labels).map((text) => element(doc, 'th', '', text)));
    head.append(groups, columns);
    const body = element(doc, 'tbody', '');
    deviceRows(comparison.devices, missingMemory(comparison)).forEach((cells, i) => {
      const row = element(doc, 'tr', 'placeviz-compare-device');
      row.dataset.device = comparison.devices[i].device;
      row.title = visibleText(comparison.devices[i].device);
      row.append(
        ...cells.map((text, k) =>
          element(
            doc,
            k === 0 ? 'th' : 'td',
            k > 0 && k % 3 === 0 ? 'placeviz-compare-delta' : '',
            text,
          ),
        ),
      );
      body.append(row);
    });
    table.append(head, body);
    const wrap = element(doc, 'div', 'placeviz-compare-table');
    wrap.append(table);
    root.append(wrap);
  }
  const moved = comparison.moved;
  const count = moved.length;
  const section = element(doc, 'div', 'placeviz-compare-moved');
  section.append(
    element(
      doc,
      'div',
      'placeviz-compare-moved-title',
      count === 0
        ? `no op moved: ${second} places every op where ${first} does`
        : `${count.toLocaleString('en-US')} op${count === 1 ? '' : 's'} moved (ringed in both graphs)`,
    ),
  );
  if (count > 0) {
    const list = element(doc, 'ul', 'placeviz-compare-moved-list');
    list.append(
      ...movedLines(moved).map((text, i) =>
        element(
          doc,
          'li',
          i < MOVED_LISTED ? 'placeviz-compare-moved-op' : 'placeviz-compare-more',
          text,
        ),
      ),
    );
    section.append(list);
  }
  root.append(section);
  return root;
}
