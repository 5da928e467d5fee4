/**
 * Animation frames and a millisecond clock that also exist where the browser's do not (vitest's
 * jsdom lacks requestAnimationFrame; a worker may lack performance).
 */

export const schedule: (cb: () => void) => number =
  typeof requestAnimationFrame === 'function'
    ? (cb) => requestAnimationFrame(cb)
    : (cb) => setTimeout(cb, 16) as unknown as number;

export const unschedule: (handle: number) => void =
  typeof cancelAnimationFrame === 'function'
    ? (handle) => cancelAnimationFrame(handle)
    : (handle) => clearTimeout(handle);

export function now(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}
