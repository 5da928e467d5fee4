/**
 * When each run was active: from its first op, transfer or wait (a cluster task's stage waiting for
 * other tasks) start to its last one's end (the "active span"), and the extent of all activity. Folded in from a cursor, so keeping it current
 * while a loop streams in costs the new events only.
 */
import { EventCursor, type CursorEvents } from './cursor';
import { TimeAxis } from './timeaxis';
import { EventKind, type EventBatch } from './types';

export type ActivityEvents = Pick<EventBatch, 'kind' | 't0' | 't1' | 'run' | 'source'> &
  CursorEvents;

export class RunActivity {
  /** Per run id: [first op, transfer or wait start, last one's end], ns since origin. */
  readonly spans = new Map<number, [number, number]>();
  /** Per run id: the timing sources of its op and transfer events, as a bit set (1 << code). */
  readonly sources = new Map<number, number>();
  private lo = Infinity;
  private hi = -Infinity;
  private memoryLo = Infinity;
  private memoryHi = -Infinity;
  private readonly cursor = new EventCursor();
  private axis: TimeAxis | null = null;

  /** Fold in the events added since the last update; true when anything changed. */
  update(events: ActivityEvents): boolean {
    const { start, end, restart } = this.cursor.advance(events);
    if (restart) {
      this.spans.clear();
      this.sources.clear();
      this.lo = this.memoryLo = Infinity;
      this.hi = this.memoryHi = -Infinity;
    }
    for (let e = start; e < end; e++) {
      const kind = events.kind[e];
      const t0 = events.t0[e];
      const t1 = Math.max(t0, events.t1[e]);
      if (kind === EventKind.OP || kind === EventKind.TRANSFER || kind === EventKind.WAIT) {
        const run = events.run[e];
        const span = this.spans.get(run);
        if (span === undefined) {
          this.spans.set(run, [t0, t1]);
        } else {
          span[0] = Math.min(span[0], t0);
          span[1] = Math.max(span[1], t1);
        }
        this.sources.set(run, (this.sources.get(run) ?? 0) | (1 << events.source[e]));
      }
      if (
        kind === EventKind.RUN ||
        kind === EventKind.OP ||
        kind === EventKind.TRANSFER ||
        kind === EventKind.WAIT
      ) {
        this.lo = Math.min(this.lo, t0);
        this.hi = Math.max(this.hi, t1);
      } else if (kind === EventKind.ALLOC || kind === EventKind.FREE) {
        this.memoryLo = Math.min(this.memoryLo, t0);
        this.memoryHi = Math.max(this.memoryHi, t0);
      }
    }
    const changed = restart || end > start;
    if (changed) {
      this.axis = null;
    }
    return changed;
  }

  /** From the first op or transfer start to the last one's end; null without any. */
  get activeExtent(): [number, number] | null {
    let lo = Infinity;
    let hi = -Infinity;
    for (const [a, b] of this.spans.values()) {
      lo = Math.min(lo, a);
      hi = Math.max(hi, b);
    }
    return lo <= hi ? [lo, hi] : null;
  }

  /**
   * What the panels show first (their x range): runs, ops and transfers, else the memory
   * events; null without any.
   */
  get extent(): [number, number] | null {
    if (this.lo <= this.hi) {
      return [this.lo, this.hi];
    }
    return this.memoryLo <= this.memoryHi ? [this.memoryLo, this.memoryHi] : null;
  }

  /** The axis that collapses the idle gaps between the runs' active spans. */
  get timeAxis(): TimeAxis {
    this.axis ??= new TimeAxis([...this.spans.values()]);
    return this.axis;
  }
}
