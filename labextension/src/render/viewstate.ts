/**
 * What the linked views share: the selected and hovered op, the scrubber's time and run, the colour mode and
 * the filter. Views write it and listen to it; none of them talks to another directly.
 */
import type { ColourMode } from './types';

export interface ViewStateFields {
  selected: number | null; // node id whose details are shown
  hovered: number | null; // node id under the pointer in any view
  time: number | null; // scrubber time in ns since origin; null: the end (everything done)
  run: number | null; // the run id the scrubber and timeline show; null: all runs
  colour: ColourMode;
  filter: string; // search text: name, type or device substring
}

export type ViewStateListener = (changed: ReadonlySet<keyof ViewStateFields>) => void;

export class ViewState {
  private fields: ViewStateFields = {
    selected: null,
    hovered: null,
    time: null,
    run: null,
    colour: 'device',
    filter: '',
  };
  private listeners = new Set<ViewStateListener>();

  get<K extends keyof ViewStateFields>(key: K): ViewStateFields[K] {
    return this.fields[key];
  }

  /** Change some fields; listeners hear once, with the names of the fields that changed. */
  set(patch: Partial<ViewStateFields>): void {
    const changed = new Set<keyof ViewStateFields>();
    for (const key of Object.keys(patch) as (keyof ViewStateFields)[]) {
      if (this.fields[key] !== patch[key]) {
        changed.add(key);
      }
    }
    if (changed.size === 0) {
      return;
    }
    this.fields = { ...this.fields, ...patch };
    for (const listener of [...this.listeners]) {
      listener(changed);
    }
  }

  listen(listener: ViewStateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
