/**
 * A live widget's view and the saved copy of its document, which the kernel keeps in an output
 * after it (placeviz/inspector/cell_output.py) so that a notebook saved after the kernel died
 * mid-cell still shows what the view had. The copy names the widget's model; while a view of that
 * model is on the page the copy shows nothing, since the view shows the same runs, live.
 */
const ATTRIBUTE = 'data-placeviz-model';

/** Mark `element` as the view of the widget model `modelId`. */
export function markLiveView(element: HTMLElement, modelId: string): void {
  element.setAttribute(ATTRIBUTE, modelId);
}

/** The live model an output's metadata names (`{"live_model": id}` under the MIME type), if any. */
export function liveModelOf(metadata: unknown, mimeType: string): string | null {
  const entry = (metadata as Record<string, unknown> | undefined)?.[mimeType];
  const id = (entry as Record<string, unknown> | undefined)?.live_model;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** Whether a view of the widget model `modelId` is on `doc`'s page. */
export function liveViewShown(doc: Document, modelId: string): boolean {
  return [...doc.querySelectorAll(`[${ATTRIBUTE}]`)].some(
    (element) => element.getAttribute(ATTRIBUTE) === modelId,
  );
}
