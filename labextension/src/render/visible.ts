/**
 * Names as text a reader can trust. A document's op, scope and device names are untrusted, and
 * control and format characters (Unicode Cc, Cf: the bidirectional embeddings and overrides
 * U+202A-U+202E, the isolates U+2066-U+2069, the marks U+200E/U+200F, zero-width characters,
 * newlines) would change how the text around them reads: `safe\u202egnp.exe` displays as
 * `safeexe.png`. Every name set as text (DOM text and titles, canvas labels, plotly labels) goes
 * through `visibleText`, which shows them as escapes; placeviz/inspector/summary.py's
 * `visible_text` is the same rule for the kernel's text. Messages (a run's error) keep their line
 * breaks and tabs with `lines`: they are laid out in lines, and the names in them are quoted.
 */
const HIDDEN = /[\p{Cc}\p{Cf}]/gu;
const LAYOUT = new Set(['\n', '\t']);

export function visibleText(text: unknown, { lines = false }: { lines?: boolean } = {}): string {
  return String(text ?? '').replace(HIDDEN, (ch) => {
    if (lines && LAYOUT.has(ch)) {
      return ch;
    }
    const code = ch.codePointAt(0)!;
    return code <= 0xffff
      ? `\\u${code.toString(16).padStart(4, '0')}`
      : `\\U${code.toString(16).padStart(8, '0')}`;
  });
}
