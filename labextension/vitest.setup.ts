/**
 * jsdom lacks a few DOM classes that @lumino/dragdrop (through @lumino/widgets, used by the MIME
 * renderer and @jupyter-widgets/base) touches when imported.
 */
if (typeof window !== 'undefined' && typeof globalThis.DragEvent === 'undefined') {
  class DragEvent extends MouseEvent {
    readonly dataTransfer: DataTransfer | null = null;
  }
  globalThis.DragEvent = DragEvent as unknown as typeof globalThis.DragEvent;
}

export {};
