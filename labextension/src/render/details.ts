/**
 * The details pane: everything the document says about the selected op, as text. Inputs and
 * outputs are buttons that select that op. The inspector calls update(change) after store changes
 * (view.ts); the pane follows the selection by itself.
 */
import { executedIn, executionsOf, shownRun, type Execution } from './controlflow';
import { element } from './dom';
import { formatBytes, formatNs } from './format';
import { formatShapes } from './opformat';
import type { PlacementStore } from './store';
import type { EdgeRecord, NodeRecord } from './types';
import type { View } from './view';
import type { ViewState } from './viewstate';

/** Inputs or outputs listed before the rest are summarised (a hub op may have thousands). */
const MAX_NEIGHBOURS = 50;
/** An op's executions in a loop listed before the rest are summarised. */
const MAX_ITERATIONS = 100;

interface Neighbours {
  inputs: Map<number, EdgeRecord[]>;
  outputs: Map<number, EdgeRecord[]>;
}

function neighbours(edges: readonly EdgeRecord[]): Neighbours {
  const inputs = new Map<number, EdgeRecord[]>();
  const outputs = new Map<number, EdgeRecord[]>();
  const add = (map: Map<number, EdgeRecord[]>, key: number, edge: EdgeRecord) => {
    const list = map.get(key);
    if (list === undefined) {
      map.set(key, [edge]);
    } else {
      list.push(edge);
    }
  };
  for (const edge of edges) {
    add(inputs, edge.dst, edge);
    add(outputs, edge.src, edge);
  }
  return { inputs, outputs };
}

export function renderDetails(parent: HTMLElement, store: PlacementStore, state: ViewState): View {
  const doc = parent.ownerDocument;
  const root = parent.appendChild(element(doc, 'div', 'placeviz-details'));
  let adjacency: { edges: readonly EdgeRecord[]; lists: Neighbours } | null = null;

  const make = <K extends keyof HTMLElementTagNameMap>(
    tag: K,
    className: string,
    text?: string,
    options?: { message?: boolean },
  ) => element(doc, tag, className, text, options);

  const row = (list: HTMLElement, label: string, ...values: (HTMLElement | string)[]) => {
    list.append(make('dt', 'placeviz-details-label', label));
    const value = make('dd', 'placeviz-details-value');
    value.append(...values);
    list.append(value);
    return value;
  };

  const deviceName = (id: number | null) =>
    id === null ? 'not placed' : (store.deviceById(id)?.name ?? `unknown device ${id}`);

  const opLinks = (edges: EdgeRecord[], end: 'src' | 'dst'): HTMLElement => {
    const list = make('ul', 'placeviz-details-ops');
    for (const edge of edges.slice(0, MAX_NEIGHBOURS)) {
      const other = store.nodeById(edge[end]);
      const item = make('li', '');
      const link = make(
        'button',
        'placeviz-details-op',
        `${edge.kind === 'control' ? '^' : ''}${other?.name ?? `#${edge[end]}`}`,
      );
      link.setAttribute('type', 'button');
      if (edge.crosses) {
        link.title = `moves ${formatBytes(edge.bytes)} between devices`;
        link.classList.add('placeviz-details-transfer');
      }
      link.addEventListener('click', () => state.set({ selected: edge[end] }));
      item.append(link);
      list.append(item);
    }
    if (edges.length > MAX_NEIGHBOURS) {
      list.append(make('li', 'placeviz-details-more', `… ${edges.length - MAX_NEIGHBOURS} more`));
    }
    return list;
  };

  const timeline = (index: number): HTMLElement[] => {
    const spans = store.opSpans();
    const t0 = spans.t0[index];
    const t1 = spans.t1[index];
    if (Number.isNaN(t0)) {
      const last = store.runs[store.runs.length - 1];
      if (last?.unread?.includes(index)) {
        // counted from 1, as the header does
        const why =
          `ran as a NoOp in run ${last.id + 1}: nothing in the run reads its outputs, so its ` +
          'kernel never ran (TensorFlow’s graph optimizer does the same)';
        return [make('span', 'placeviz-details-muted', why)];
      }
      return [make('span', 'placeviz-details-muted', 'has not run')];
    }
    const run = store.runs.find((r) => r.id === spans.run[index]);
    const start = run ? run.t0 - store.originNs : t0;
    const end = run ? Math.max(run.t1 - store.originNs, t1) : t1;
    const span = Math.max(end - start, 1);
    const track = make('div', 'placeviz-details-timeline');
    const bar = make('div', 'placeviz-details-bar');
    bar.style.left = `${(100 * (t0 - start)) / span}%`;
    bar.style.width = `${Math.max((100 * (t1 - t0)) / span, 0.5)}%`;
    if (spans.failed[index]) {
      bar.classList.add('placeviz-details-bar-failed');
    }
    track.append(bar);
    const where = run ? `into run ${run.id + 1}` : 'after the origin'; // counted from 1, as the header does
    const text = `${formatNs(t1 - t0)}, starting ${formatNs(t0 - start)} ${where}${
      spans.failed[index] ? ' (failed)' : ''
    }`;
    const shown = [track, make('div', 'placeviz-details-muted', text)];
    if (run?.folded?.includes(index)) {
      const why =
        'folded into a constant: its inputs are all constants, so its value was computed once, ' +
        'when the run was prepared (TensorFlow’s graph optimizer does the same)';
      shown.push(make('div', 'placeviz-details-muted', why));
    }
    return shown;
  };

  /** An op's executions in its while loop, one line per iteration (counted from 1). */
  const iterationList = (executions: readonly Execution[]): HTMLElement => {
    const list = make('ol', 'placeviz-details-iterations');
    for (const e of executions.slice(0, MAX_ITERATIONS)) {
      const where =
        store.deviceById(e.device)?.name.replace(/^.*device:/, '') ?? `device ${e.device}`;
      const text = e.ran
        ? `iteration ${e.iteration + 1} · ${formatNs(e.t1 - e.t0)} · ${where}`
        : `iteration ${e.iteration + 1} · not executed (dead inputs: the loop's condition said stop)`;
      const item = make('li', e.ran ? '' : 'placeviz-details-muted', text);
      item.dataset.iteration = String(e.iteration);
      list.append(item);
    }
    if (executions.length > MAX_ITERATIONS) {
      list.append(
        make('li', 'placeviz-details-more', `… ${executions.length - MAX_ITERATIONS} more`),
      );
    }
    return list;
  };

  /**
   * In the run shown, the op's executions per iteration of its while loop, or that a cond's
   * branch not taken left it not executed; nothing for an op that ran once, as most do.
   */
  const controlFlowRows = (list: HTMLElement, node: NodeRecord) => {
    const run = shownRun(store.runs, state.get('run'));
    if (run === null) {
      return;
    }
    const executions = executionsOf(store, node.id, run);
    if (executions.length > 0) {
      const ran = executions.filter((e) => e.ran).length;
      row(
        list,
        `iterations (${ran} run)`,
        make('div', 'placeviz-details-muted', `in run ${run + 1}, inside a while loop`),
        iterationList(executions),
      ).classList.add('placeviz-details-loop');
    } else if (executedIn(store, node.id, run) === 'not-run') {
      row(
        list,
        'executed',
        make(
          'span',
          'placeviz-details-not-run',
          `not executed in run ${run + 1}: it is in the branch of a cond that was not taken`,
        ),
      );
    }
  };

  /**
   * Why an op failed or is not placed: the placement error the document gives as its reason, the
   * error of the latest failed run that quotes its name (`'tower_0/b'`), or, for an op no run
   * placed, that it was not placed.
   */
  const failureOf = (node: NodeRecord, index: number): { kind: string; text: string } | null => {
    if (node.device === null && node.reason?.kind === 'unplaced') {
      return { kind: 'placement failed', text: node.reason.text };
    }
    const failed = store.opSpans().failed[index] === 1;
    if (!failed && node.device !== null) {
      return null;
    }
    const quoted = `'${node.name}'`;
    const run = [...store.runs]
      .reverse()
      .find((r) => r.status === 'error' && (r.error ?? '').includes(quoted));
    const kind = failed ? 'failed' : 'not placed';
    if (run !== undefined) {
      return { kind, text: `run ${run.id + 1}: ${run.error ?? ''}` };
    }
    return {
      kind,
      text: failed ? 'its run ended in an error' : 'no device yet: no run has needed it so far',
    };
  };

  const show = (node: NodeRecord, index: number) => {
    root.append(make('div', 'placeviz-details-name', node.name));
    const list = make('dl', 'placeviz-details-list');
    row(list, 'type', node.type || 'unknown');
    const failure = failureOf(node, index);
    if (failure !== null) {
      // A failed or unplaced op: the error is why it is not (or no longer) running anywhere.
      const kind = make('span', 'placeviz-reason-kind placeviz-reason-failed', failure.kind);
      row(
        list,
        'why here',
        kind,
        // An error is a message: its line breaks show as breaks, not escapes.
        make('span', 'placeviz-reason placeviz-reason-error', failure.text, { message: true }),
      );
      if (node.reason && node.reason.kind !== 'unplaced') {
        const placed = make('span', 'placeviz-reason-kind', node.reason.kind);
        placed.dataset.kind = node.reason.kind;
        row(list, 'placed', placed, make('span', 'placeviz-reason', node.reason.text));
      }
    } else if (node.reason) {
      // The placer's rule (contract.gen.ts REASON_KINDS: 'cost' is the cost-model placer's).
      const kind = make('span', 'placeviz-reason-kind', node.reason.kind);
      kind.dataset.kind = node.reason.kind;
      row(list, 'why here', kind, make('span', 'placeviz-reason', node.reason.text));
    } else {
      row(list, 'why here', make('span', 'placeviz-reason', 'no placement reason recorded'));
    }
    row(list, 'requested', node.requested || '(any device)');
    row(list, 'assigned', deviceName(node.device));
    row(list, 'shapes', formatShapes(node.shapes));
    row(list, 'dtype', node.dtype ?? 'unknown');
    row(list, 'bytes out', formatBytes(node.bytes_out));
    if (adjacency === null || adjacency.edges !== store.edges) {
      adjacency = { edges: store.edges, lists: neighbours(store.edges) };
    }
    const inputs = adjacency.lists.inputs.get(node.id) ?? [];
    const outputs = adjacency.lists.outputs.get(node.id) ?? [];
    row(list, `inputs (${inputs.length})`, opLinks(inputs, 'src'));
    row(list, `outputs (${outputs.length})`, opLinks(outputs, 'dst'));
    row(list, 'last run', ...timeline(index));
    controlFlowRows(list, node);
    row(list, 'source', make('code', 'placeviz-details-source', node.source || 'unknown'));
    root.append(list);
  };

  const update = () => {
    root.replaceChildren();
    const selected = state.get('selected');
    const index = selected === null ? -1 : store.nodeIndex(selected);
    if (index < 0) {
      root.append(
        make(
          'p',
          'placeviz-details-empty',
          'Click an op in the graph to see where it runs and why.',
        ),
      );
      return;
    }
    show(store.nodes[index], index);
  };
  update();
  const stop = state.listen((changed) => {
    if (changed.has('selected') || changed.has('run')) {
      update();
    }
  });
  return {
    update(change) {
      if (change.tables || change.events) {
        update(); // the run in flight is not shown here
      }
    },
    dispose() {
      stop();
      root.remove();
    },
  };
}
