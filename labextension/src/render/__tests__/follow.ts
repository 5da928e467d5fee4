/** Tests of one view alone: hand it each store change at once, as the inspector does per frame. */
import type { PlacementStore } from '../store';
import { ChangeCollector, type View, type ViewChange } from '../view';

/** A change of everything: what a test hands a view after changing the store by hand. */
export const EVERYTHING: ViewChange = { tables: true, events: true, progress: true };

export function follow(store: PlacementStore, view: View): () => void {
  const changes = new ChangeCollector();
  return store.onChange((change) => {
    changes.add(change);
    view.update(changes.take());
  });
}
