/**
 * Reading a store's events from a cursor, so a view's update costs the events added since its
 * last one, not all of them. The cursor is an absolute event index (`dropped + i`, see events.ts);
 * when the events were cleared, or the oldest dropped past what the view has folded in, the view
 * must start over from the events still held.
 */
import type { EventBatch } from './types';

export type CursorEvents = Pick<EventBatch, 'count'> & {
  readonly dropped: number;
  readonly generation: number;
};

export class EventCursor {
  private next = 0;
  private generation = -1;
  private dropped = 0;

  /**
   * The range [start, end) of event indices not read yet, and whether the reader must forget
   * what it folded in before (then start is 0).
   */
  advance(events: CursorEvents): { start: number; end: number; restart: boolean } {
    const restart = events.generation !== this.generation || events.dropped !== this.dropped;
    const start = restart ? 0 : this.next - events.dropped;
    this.generation = events.generation;
    this.dropped = events.dropped;
    this.next = events.dropped + events.count;
    return { start, end: events.count, restart };
  }
}
