/**
 * What a graph's control flow did in the run shown, read from its events: each while loop's
 * iteration count (the `frame` and `iteration` columns of its ops' executions), the ops a cond's
 * branch not taken left not executed (NOT_RUN events and no OP event in that run), and an op's
 * executions, one per iteration. The graph view marks loops and branches not taken with them,
 * the details pane lists an op's iterations, the timeline names a bar's iteration.
 */
import { EventKind, type EventBatch, type NodeRecord, type RunRecord } from './types';

/** The events and tables the derivations read (a PlacementStore). */
export interface FlowSource {
  readonly events: EventBatch;
  readonly nodes: readonly NodeRecord[];
  readonly runs: readonly RunRecord[];
  nodeIndex(id: number): number;
}

/** A while loop of the graph: its frame's LoopCond and the name scope its ops are in. */
export interface LoopRun {
  /** The LoopCond's node id: the `frame` of its ops' executions. */
  readonly node: number;
  /** The scope the loop's ops live in (`rnn/while`): the graph's container for the loop. */
  readonly scope: string;
  /** Iterations of its body in the run shown; null when the loop did not run in it. */
  readonly iterations: number | null;
}

export interface ControlFlowRun {
  /** The run the marks are of: the picked one, else the latest; null before any run. */
  readonly run: number | null;
  readonly loops: readonly LoopRun[];
  /** Per node index, 1 when the run recorded it not executed (a cond's branch not taken). */
  readonly notRun: Uint8Array;
  /** How many nodes notRun marks. */
  readonly notRunCount: number;
  /** Per node index, 1 when it ran in the run (an OP event). */
  readonly ran: Uint8Array;
}

/** One execution of an op inside a while loop. */
export interface Execution {
  readonly iteration: number;
  readonly t0: number;
  readonly t1: number;
  readonly device: number;
  /** False: its inputs were dead (the iteration that leaves the loop runs only its condition). */
  readonly ran: boolean;
}

/** The run whose control flow is shown: `picked` (state.run), else the latest run recorded. */
export function shownRun(runs: readonly RunRecord[], picked: number | null): number | null {
  return picked ?? (runs.length > 0 ? runs[runs.length - 1].id : null);
}

/** " · iteration 3" for an execution's 0-based iteration (counted from 1, as runs are). */
export function iterationText(iteration: number): string {
  return iteration >= 0 ? ` · iteration ${iteration + 1}` : '';
}

/** "50 iterations", "1 iteration", "not run": a loop's iterations in the run shown. */
export function iterationsText(loop: LoopRun): string {
  const n = loop.iterations;
  return n === null ? 'not run' : `${n.toLocaleString('en-US')} iteration${n === 1 ? '' : 's'}`;
}

/** "while · 50 iterations": what a folded loop's tab says. */
export function loopText(loop: LoopRun): string {
  return `while · ${iterationsText(loop)}`;
}

/**
 * The loops' iteration counts and the ops not executed in run `run` (one pass over the events).
 * An iteration count is the last iteration the loop's condition ran in: in it the condition
 * said stop, so the body ran that many times.
 */
export function controlFlowOf(source: FlowSource, run: number | null): ControlFlowRun {
  const { events, nodes } = source;
  const loopIndex = new Map<number, number>(); // LoopCond node id -> position in loops
  const loopNodes: NodeRecord[] = [];
  for (const node of nodes) {
    if (node.type === 'LoopCond') {
      loopIndex.set(node.id, loopNodes.length);
      loopNodes.push(node);
    }
  }
  const last = new Int32Array(loopNodes.length).fill(-1);
  const notRun = new Uint8Array(nodes.length);
  const ran = new Uint8Array(nodes.length);
  if (run !== null) {
    for (let e = 0; e < events.count; e++) {
      if (events.run[e] !== run) {
        continue;
      }
      const kind = events.kind[e];
      if (kind !== EventKind.OP && kind !== EventKind.NOT_RUN) {
        continue;
      }
      const index = source.nodeIndex(events.node[e]);
      if (index >= 0) {
        if (kind === EventKind.OP) {
          ran[index] = 1;
        } else {
          notRun[index] = 1;
        }
      }
      // Only a LoopCond's id names a frame (a document without these columns holds -1).
      const loop = loopIndex.get(events.frame[e]);
      if (loop !== undefined && events.iteration[e] > last[loop]) {
        last[loop] = events.iteration[e];
      }
    }
  }
  let notRunCount = 0;
  for (let n = 0; n < notRun.length; n++) {
    // An op inside a loop is not run in the iteration that leaves it, yet ran in the others.
    notRun[n] = notRun[n] === 1 && ran[n] === 0 ? 1 : 0;
    notRunCount += notRun[n];
  }
  const loops = loopNodes.map((node, k) => ({
    node: node.id,
    scope: node.scope,
    iterations: last[k] >= 0 ? last[k] : null,
  }));
  return { run, loops, notRun, notRunCount, ran };
}

/** Op `nodeId`'s executions inside while loops in run `run`, by iteration. */
export function executionsOf(source: FlowSource, nodeId: number, run: number | null): Execution[] {
  const { events } = source;
  const found: Execution[] = [];
  if (run === null) {
    return found;
  }
  // Only a LoopCond's id names a frame (a writer may leave the loop columns at 0, not -1).
  const isLoop = (frame: number) => source.nodes[source.nodeIndex(frame)]?.type === 'LoopCond';
  for (let e = 0; e < events.count; e++) {
    const kind = events.kind[e];
    if (
      events.node[e] === nodeId &&
      events.run[e] === run &&
      events.iteration[e] >= 0 &&
      (kind === EventKind.OP || kind === EventKind.NOT_RUN) &&
      isLoop(events.frame[e])
    ) {
      found.push({
        iteration: events.iteration[e],
        t0: events.t0[e],
        t1: events.t1[e],
        device: events.device[e],
        ran: kind === EventKind.OP,
      });
    }
  }
  return found.sort((a, b) => a.iteration - b.iteration || a.t0 - b.t0);
}

/** Whether op `nodeId` ran in run `run` (an OP event), was recorded not run only, or neither. */
export function executedIn(
  source: FlowSource,
  nodeId: number,
  run: number | null,
): 'ran' | 'not-run' | 'absent' {
  const { events } = source;
  let skipped = false;
  for (let e = 0; run !== null && e < events.count; e++) {
    if (events.node[e] === nodeId && events.run[e] === run) {
      if (events.kind[e] === EventKind.OP) {
        return 'ran';
      }
      skipped ||= events.kind[e] === EventKind.NOT_RUN;
    }
  }
  return skipped ? 'not-run' : 'absent';
}
