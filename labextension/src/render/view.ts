/**
 * The one contract every part of the inspector (legend, DAG, details, scrubber, memory and timing
 * panels) keeps: the inspector, the store's only listener, hands each view what changed once per
 * animation frame, and disposes of it once. A view skips the work a change does not call for.
 */
import { STORE_CHANGES, type StoreChange } from './store';

/**
 * What changed in the store since the views' last update: per kind of store change, whether any
 * happened (the frame's mutations coalesced). `events` covers appended, dropped and cleared
 * events alike: a view reading from a cursor (cursor.ts) tells them apart by itself.
 */
export type ViewChange = Readonly<Record<StoreChange, boolean>>;

function noChange(): Record<StoreChange, boolean> {
  return Object.fromEntries(STORE_CHANGES.map((change) => [change, false])) as Record<
    StoreChange,
    boolean
  >;
}

export interface View {
  /** Bring the view up to date with the store after `change`. */
  update(change: ViewChange): void;
  /** Stop listening and remove the view's elements; safe to call twice. */
  dispose(): void;
}

/** Collects the store's changes between two frames. */
export class ChangeCollector {
  private pending = noChange();

  add(change: StoreChange): void {
    this.pending[change] = true;
  }

  /** What was collected since the last take, and start over. */
  take(): ViewChange {
    const taken = Object.freeze(this.pending);
    this.pending = noChange();
    return taken;
  }
}
