/**
 * Building the views' DOM. Text is always set as text (`textContent`), never parsed as HTML:
 * op names and device names in a document are untrusted, and shown with `visibleText`.
 */
import { visibleText } from './visible';

/**
 * A new `tag` element of `doc` with `className`, and `text` as its text when given, made visible
 * (`visibleText`; a `message` keeps its line breaks).
 */
export function element<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  className: string,
  text?: string,
  { message = false }: { message?: boolean } = {},
): HTMLElementTagNameMap[K] {
  const node = doc.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = visibleText(text, { lines: message });
  }
  return node;
}

/**
 * The line a host shows instead of an inspector when it cannot read a document; `what` names
 * the kind of document ('comparison' for compare.ts's).
 */
export function documentError(
  doc: Document,
  error: unknown,
  what = 'placement document',
): HTMLDivElement {
  const reason = error instanceof Error ? error.message : String(error);
  return element(
    doc,
    'div',
    'placeviz-error placeviz-host-error',
    `placeviz: cannot show this ${what}: ${reason}`,
    { message: true },
  );
}
