/**
 * Applying the kernel's live `update` messages (docs/inspector.md, "Live messages") to a store:
 * the widget host does it for each custom message, and the standalone page's `renderLive` does the
 * same for messages handed to it (benchmarks/bench_browser_memory.py).
 */
import { decodeBatch } from './batch';
import type { PlacementStore, RunProgress } from './store';
import type { RunRecord, Tables } from './types';

export type BufferLike = ArrayBuffer | DataView | ArrayBufferView;

export interface LiveMessage {
  kind?: unknown;
  reset?: unknown;
  tables?: unknown;
  runs?: unknown;
  count?: unknown;
  skipped?: unknown;
  progress?: unknown;
}

/** An update's `progress`: undefined (leave the snapshot), null (clear it) or a valid snapshot. */
export function parseProgress(progress: unknown): RunProgress | null | undefined {
  if (progress === undefined || progress === null) {
    return progress;
  }
  const fail = (what: string): never => {
    throw new Error(`placeviz: update.progress ${what}`);
  };
  if (typeof progress !== 'object' || Array.isArray(progress)) {
    fail('must be an object {run, waiting, running, done} or null');
  }
  const record = progress as Record<string, unknown>;
  if (!Number.isInteger(record.run)) {
    fail('.run must be an integer run id');
  }
  const ids = (key: 'waiting' | 'running' | 'done'): number[] => {
    const list = record[key];
    if (!Array.isArray(list) || !list.every((id) => Number.isInteger(id))) {
      fail(`.${key} must be a list of node ids`);
    }
    return list as number[];
  };
  return {
    run: record.run as number,
    waiting: ids('waiting'),
    running: ids('running'),
    done: ids('done'),
  };
}

/**
 * Apply one kernel -> view `update` (docs/inspector.md, "Live messages") to a store: a reset, new
 * tables, run records to append (the newest RUNS_LISTED kept), the count of events skipped, the
 * events of the buffers, then the snapshot of the run in flight (`progress`: an object replaces
 * it, null clears it), each only when the update has it.
 */
export function applyMessage(
  store: PlacementStore,
  content: LiveMessage,
  buffers: readonly BufferLike[] = [],
): void {
  if (content?.kind !== 'update') {
    throw new Error(`placeviz: unknown message kind ${JSON.stringify(content?.kind)}`);
  }
  // Decoded first, so a malformed update changes nothing.
  const count = Number(content.count ?? 0);
  const batch = count > 0 ? decodeBatch({ count }, [...buffers]) : null;
  if (content.runs !== undefined && !Array.isArray(content.runs)) {
    throw new Error('placeviz: update.runs must be a list of run records');
  }
  const runs = (content.runs ?? []) as RunRecord[];
  const progress = parseProgress(content.progress);
  if (content.reset === true) {
    store.reset();
  }
  const skipped = Number(content.skipped ?? 0);
  if (Number.isFinite(skipped) && skipped > 0) {
    store.addSkipped(skipped);
  }
  if (content.tables !== undefined || content.reset === true || runs.length > 0) {
    const tables = (content.tables ?? store) as Partial<Tables>;
    const kept = content.reset === true ? [] : store.runs;
    store.applyTables({
      origin_ns: tables.origin_ns ?? store.originNs,
      devices: [...(tables.devices ?? store.devices)],
      nodes: [...(tables.nodes ?? store.nodes)],
      edges: [...(tables.edges ?? store.edges)],
      runs: [...kept, ...runs],
    });
  }
  if (batch !== null) {
    store.appendBatch(batch);
  }
  if (progress !== undefined) {
    store.setProgress(progress);
  }
}
