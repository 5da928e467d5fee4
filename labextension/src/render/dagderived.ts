/**
 * What the DAG view derives from the store and the shared state, each part kept until what it
 * comes from changes: the scope hierarchy and the folding chosen for the canvas, the laid-out
 * model, and per box its colours, alerts, filter dimming, live marks, comparison marks and
 * control-flow marks. The layout is rebuilt only when the graph tables or the opened groups
 * change; event batches only recolour. Nothing here touches the DOM: the canvas's room comes from
 * the view's `measure`, and the filter's matches go to its `onMatches`.
 */
import { colourBoxes, progressMarks, type BoxColours } from './dagcolour';
import { controlFlowOf, shownRun, type ControlFlowRun } from './controlflow';
import { flowMarks, type FlowMarks } from './dagflow';
import { readableExpanded, sideBelow, type CanvasSize } from './dagfold';
import { buildDagModel, storeEdges, storeHierarchy, type DagModel } from './dagmodel';
import { groupsHiding, type Hierarchy } from './scopes';
import { matchOps } from './search';
import type { PlacementStore } from './store';
import type { ViewChange } from './view';
import type { ViewState, ViewStateFields } from './viewstate';

/** The canvas's room as the page lays it out now; `laidOut` is false while it has no size. */
export type Measure = () => { laidOut: boolean; room: CanvasSize };

export class DagDerived {
  private hierarchy: Hierarchy | null = null;
  private expanded = new Set<string>();
  /** Whether the side groups stand below the graph (chosen with the folding, for the canvas). */
  private sideBelow = false;
  private model: DagModel | null = null;
  private colours: BoxColours | null = null;
  /** Per box, 1 when it holds an op that failed or was not placed; stale with the colours. */
  private alerts: Uint8Array | null = null;
  private dimmed: Uint8Array | null = null;
  private dimmedStale = true;
  /** Per box, the run in flight's mark; stale after a progress or graph change. */
  private live: Uint8Array | null = null;
  private liveStale = true;
  /** Per node index, 1 when `marked` names it; null until read or after the nodes changed. */
  private markedNodes: Uint8Array | null = null;
  /** Per box, 1 when it holds a marked op; stale with the model. */
  private markedBoxes: Uint8Array | null = null;
  /** What the run shown did with loops and conds; null until read or after events changed. */
  private flow: ControlFlowRun | null = null;
  /** Its marks per box and container; stale with the model and the flow. */
  private flowBoxes: FlowMarks | null = null;
  /** Groups the user opened or folded: kept as they are when the folding is chosen again. */
  private readonly user = { opened: new Set<string>(), folded: new Set<string>() };
  /** The laid-out canvas room the folding was chosen for (null: not laid out then). */
  private foldedFor: CanvasSize | null = null;

  constructor(
    private readonly store: PlacementStore,
    private readonly state: ViewState,
    /** Names of ops to mark with a ring of their own (a comparison's moved ops). */
    private readonly marked: ReadonlySet<string>,
    private readonly measure: Measure,
    private readonly onMatches: (matches: Uint8Array | null) => void,
  ) {}

  /** The model as last built (to size the canvas by), or null until one is. */
  get built(): DagModel | null {
    return this.model;
  }

  /** The run shown's control flow as last read (null until read or after events changed). */
  get flowRun(): ControlFlowRun | null {
    return this.flow;
  }

  /** Per box, 1 when it holds a marked op, as last drawn (null: not derived since a change). */
  get markedBoxesDrawn(): Uint8Array | null {
    return this.markedBoxes;
  }

  /** Whether the colours are derived anew on the next read. */
  get coloursStale(): boolean {
    return this.colours === null;
  }

  isExpanded(key: string): boolean {
    return this.expanded.has(key);
  }

  /**
   * Open a folded group by key, or fold an opened one, as the user asked. Unless the user moved
   * the graph, the other groups the view opened fold or open again so every label stays readable.
   */
  toggle(key: string, userMoved: boolean): void {
    const [from, to] = this.expanded.has(key)
      ? [this.user.opened, this.user.folded]
      : [this.user.folded, this.user.opened];
    from.delete(key);
    to.add(key);
    if (userMoved) {
      if (this.user.opened.has(key)) {
        this.expanded.add(key);
      } else {
        this.expanded.delete(key);
      }
    } else {
      this.chooseFolding(this.currentHierarchy());
    }
    this.invalidateModel();
  }

  /** Open the groups that hide node index `index`, as if the user had; whether any was folded. */
  unfoldFor(index: number): boolean {
    const hiding = groupsHiding(this.currentHierarchy(), index).filter(
      (key) => !this.expanded.has(key),
    );
    for (const key of hiding) {
      this.expanded.add(key);
      this.user.folded.delete(key);
      this.user.opened.add(key);
    }
    if (hiding.length > 0) {
      this.invalidateModel();
    }
    return hiding.length > 0;
  }

  /** Forget what the store's `change` makes stale. */
  storeChanged(change: ViewChange): void {
    if (change.tables) {
      this.hierarchy = null;
      this.markedNodes = null;
      this.invalidateModel();
    }
    if (change.progress) {
      // The run in flight moved on: its marks change in every mode, and the live states in
      // 'state' mode (the layout stays).
      this.liveStale = true;
      if (this.state.get('colour') === 'state' && this.state.get('time') === null) {
        this.colours = null;
      }
    }
    if (change.tables || change.events) {
      this.flow = null;
    }
    if (change.events) {
      this.alerts = null; // a failure shows in every mode
      if (this.state.get('colour') === 'state' || this.state.get('colour') === 'time') {
        // Events change only these colourings; device and memory colours stay as drawn.
        this.colours = null;
      }
    }
  }

  /** Forget what the shared state's `changed` fields make stale. */
  stateChanged(changed: ReadonlySet<keyof ViewStateFields>): void {
    if (changed.has('colour')) {
      this.colours = null;
    }
    if (changed.has('time') && this.state.get('colour') === 'state') {
      this.colours = null;
    }
    if (changed.has('run')) {
      this.flow = null; // loops and branches are marked as the picked run ran them
    }
    if (changed.has('filter')) {
      this.dimmedStale = true;
    }
  }

  /** The layout and everything per box are stale (the graph or the opened groups changed). */
  invalidateModel(): void {
    this.model = null;
    this.flowBoxes = null;
    this.colours = null;
    this.alerts = null;
    this.markedBoxes = null;
    this.dimmedStale = true;
    this.liveStale = true;
  }

  /**
   * Whether the folding is chosen again before this paint: the user has not moved the graph,
   * and the canvas got its real size, shrank (the fit would zoom out past the labels) or grew by
   * more than a quarter.
   */
  refolds(laidOut: boolean, room: CanvasSize, userMoved: boolean): boolean {
    if (userMoved || this.hierarchy === null || !laidOut) {
      return false;
    }
    const was = this.foldedFor;
    const changed = (before: number, now: number) => now < before - 2 || now - before > before / 4;
    return was === null || changed(was.width, room.width) || changed(was.height, room.height);
  }

  /** Choose the folding again for the canvas as it is now. */
  refold(): void {
    this.chooseFolding(this.currentHierarchy());
    this.invalidateModel();
  }

  currentHierarchy(): Hierarchy {
    if (this.hierarchy === null) {
      this.hierarchy = storeHierarchy(this.store);
      this.chooseFolding(this.hierarchy);
      this.model = null;
    }
    return this.hierarchy;
  }

  /**
   * The user's groups and what else keeps labels readable, fitted to the canvas as it is now, and
   * where the side groups stand for it.
   */
  private chooseFolding(hierarchy: Hierarchy): void {
    const { laidOut, room } = this.measure();
    const edges = storeEdges(this.store);
    this.expanded = readableExpanded(hierarchy, this.store.nodes, edges, room, this.user);
    this.sideBelow = sideBelow(hierarchy, this.store.nodes, edges, this.expanded, room);
    this.foldedFor = laidOut ? room : null;
  }

  currentModel(): DagModel {
    const hierarchy = this.currentHierarchy();
    if (this.model === null) {
      this.model = buildDagModel(this.store, this.expanded, hierarchy, this.sideBelow);
    }
    return this.model;
  }

  /** Loops and ops not executed in the run shown (the picked run, else the latest), per box. */
  currentFlow(model: DagModel): FlowMarks | null {
    if (this.flow === null) {
      this.flow = controlFlowOf(this.store, shownRun(this.store.runs, this.state.get('run')));
      this.flowBoxes = null;
    }
    if (this.flowBoxes === null) {
      this.flowBoxes = flowMarks(model, this.flow);
    }
    return this.flow.loops.length > 0 || this.flow.notRunCount > 0 ? this.flowBoxes : null;
  }

  /** Per box, 1 when one of its ops failed (in the latest run it ran in) or was not placed. */
  currentAlerts(model: DagModel): Uint8Array {
    if (this.alerts === null) {
      const failed = this.store.opSpans().failed;
      const alerts = new Uint8Array(model.folded.boxes.length);
      this.store.nodes.forEach((node, i) => {
        if (failed[i] === 1 || node.device === null) {
          alerts[model.folded.boxOf[i]] = 1;
        }
      });
      this.alerts = alerts;
    }
    return this.alerts;
  }

  /** Per node index, 1 when `marked` names the op. */
  currentMarkedNodes(): Uint8Array {
    if (this.markedNodes === null) {
      const marks = new Uint8Array(this.store.nodes.length);
      if (this.marked.size > 0) {
        this.store.nodes.forEach((node, i) => {
          marks[i] = this.marked.has(node.name) ? 1 : 0;
        });
      }
      this.markedNodes = marks;
    }
    return this.markedNodes;
  }

  /** Per box, 1 when it holds a marked op (a folded group holding one is marked too). */
  currentMarkedBoxes(model: DagModel): Uint8Array {
    if (this.markedBoxes === null) {
      const boxes = new Uint8Array(model.folded.boxes.length);
      this.currentMarkedNodes().forEach((mark, i) => {
        if (mark === 1) {
          boxes[model.folded.boxOf[i]] = 1;
        }
      });
      this.markedBoxes = boxes;
    }
    return this.markedBoxes;
  }

  currentColours(model: DagModel): BoxColours {
    if (this.colours === null) {
      this.colours = colourBoxes(
        model,
        this.store,
        this.state.get('colour'),
        this.state.get('time'),
      );
    }
    return this.colours;
  }

  /** Per box, 1 when none of its ops matches the filter; null without a filter. */
  currentDimmed(model: DagModel): Uint8Array | null {
    if (this.dimmedStale) {
      this.dimmedStale = false;
      const matches = matchOps(this.store, this.state.get('filter'));
      this.onMatches(matches);
      if (matches === null) {
        this.dimmed = null;
      } else {
        const dimmed = new Uint8Array(model.folded.boxes.length).fill(1);
        matches.forEach((hit, node) => {
          if (hit) {
            dimmed[model.folded.boxOf[node]] = 0;
          }
        });
        this.dimmed = dimmed;
      }
    }
    return this.dimmed;
  }

  currentLive(model: DagModel): Uint8Array | null {
    if (this.liveStale) {
      this.liveStale = false;
      this.live = progressMarks(model, this.store);
    }
    return this.live;
  }
}
