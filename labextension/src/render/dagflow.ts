/**
 * The graph's control-flow marks per box and container (controlflow.ts says what ran): a while
 * loop's scope drawn as a loop, folded or opened, with its iteration count in the run shown, and
 * the boxes whose ops a cond's branch not taken left not executed, drawn faint.
 */
import type { ControlFlowRun, LoopRun } from './controlflow';
import type { DagModel } from './dagmodel';

export interface FlowMarks {
  /** Per box: the loop it is (a folded loop scope), else null. */
  readonly loopBoxes: (LoopRun | null)[];
  /** Per container: the loop it is (an opened loop scope), else null. */
  readonly loopContainers: (LoopRun | null)[];
  /** Per box, 1 when some of its ops were recorded not executed in the run shown, none ran. */
  readonly notRun: Uint8Array;
}

/** Where `flow`'s loops and ops not executed are among `model`'s boxes and containers. */
export function flowMarks(model: DagModel, flow: ControlFlowRun): FlowMarks {
  const { groups } = model.hierarchy;
  const byScope = new Map(flow.loops.map((loop) => [loop.scope, loop]));
  const loopOf = (group: number) => (group >= 0 ? (byScope.get(groups[group].key) ?? null) : null);
  const loopBoxes = model.folded.boxes.map((box) => loopOf(box.group));
  const loopContainers = model.folded.containers.map(({ group }) => loopOf(group));
  const notRun = new Uint8Array(model.folded.boxes.length);
  if (flow.notRunCount > 0) {
    for (let b = 0; b < notRun.length; b++) {
      let skipped = false;
      let ran = false;
      for (let k = model.opStart[b]; k < model.opStart[b + 1] && !ran; k++) {
        skipped ||= flow.notRun[model.opList[k]] === 1;
        ran = flow.ran[model.opList[k]] === 1;
      }
      notRun[b] = skipped && !ran ? 1 : 0;
    }
  }
  return { loopBoxes, loopContainers, notRun };
}
