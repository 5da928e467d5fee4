// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createInspector } from './inspector';
import { setPlotlyLoader } from './plotly';
import { PlacementStore } from './store';
import { visibleText } from './visible';
import { smallDocument } from './__tests__/fixtures';
import { useContext } from './__tests__/canvas';

const SPOOF = 'safe\u202egnp.exe'; // displays as "safeexe.png"
const BIDI = [
  ...[0x202a, 0x202b, 0x202c, 0x202d, 0x202e],
  ...[0x2066, 0x2067, 0x2068, 0x2069],
  0x200e,
  0x200f,
].map((code) => String.fromCodePoint(code));
// Other control (Cc) and format (Cf) characters: NUL, newline, DEL, soft hyphen, zero-width
// space and joiner, byte-order mark, a tag character beyond the BMP.
const OTHERS = ['\u0000', '\n', '\u007f', '\u00ad', '\u200b', '\u200d', '\ufeff', '\u{e0001}'];
const HIDDEN = /[\p{Cc}\p{Cf}]/u;

describe('visibleText', () => {
  it('shows bidirectional controls as escapes', () => {
    expect(visibleText(SPOOF)).toBe('safe\\u202egnp.exe');
    for (const ch of BIDI) {
      const code = ch.codePointAt(0)!.toString(16).padStart(4, '0');
      expect(visibleText(`a${ch}b`)).toBe(`a\\u${code}b`);
    }
  });

  it('shows every other control and format character as an escape', () => {
    const shown = visibleText(`x${OTHERS.join('')}y`);
    expect(shown).toBe('x\\u0000\\u000a\\u007f\\u00ad\\u200b\\u200d\\ufeff\\U000e0001y');
    expect(shown).not.toMatch(HIDDEN);
  });

  it('leaves names without them as they are, and a message its lines', () => {
    expect(visibleText('tower_0/MatMul_1 — ópération ✓')).toBe('tower_0/MatMul_1 — ópération ✓');
    expect(visibleText(undefined)).toBe('');
    expect(visibleText('boom\n\t[[node \u202ex]]', { lines: true })).toBe(
      'boom\n\t[[node \\u202ex]]',
    );
  });
});

/** Text a 2D context was asked to draw. */
function recordingContext(texts: string[]): CanvasRenderingContext2D {
  const props: Record<string | symbol, unknown> = {
    fillText: (text: string) => texts.push(text),
    measureText: (text: string) => ({ width: text.length * 6 }),
  };
  return new Proxy(props, {
    get: (target, key) => (key in target ? target[key] : () => undefined),
    set: (target, key, value) => {
      target[key] = value;
      return true;
    },
  }) as unknown as CanvasRenderingContext2D;
}

describe('an inspector of a document whose names hide characters', () => {
  beforeEach(() => {
    setPlotlyLoader(() => Promise.reject(new Error('no plotly in jsdom')));
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    setPlotlyLoader(null);
    vi.restoreAllMocks();
    document.body.replaceChildren();
  });

  it('shows them as escapes in its text, titles and canvas labels', async () => {
    const drawn: string[] = [];
    useContext(recordingContext(drawn));
    const doc = smallDocument();
    doc.nodes[0].name = SPOOF;
    doc.nodes[1].name = `tower_0/${BIDI.join('')}b`;
    doc.nodes[1].source = `model\u2066.py:2`;
    doc.devices[1].name = `/job:x\u202e/device:GPU:0`;
    doc.devices[1].description = `card\u200f`;
    doc.runs[1].error = `boom\n\t[[node '${SPOOF}' (Const)]]`;
    doc.runs[1].fetches = [SPOOF];
    const host = document.body.appendChild(document.createElement('div'));
    const inspector = createInspector(host, PlacementStore.fromDocument(doc));
    inspector.state.set({ selected: 0 });
    await new Promise((resolve) => setTimeout(resolve, 60));

    const texts: string[] = [];
    const walker = document.createTreeWalker(host, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const inMessage =
        node.parentElement?.closest('.placeviz-error, .placeviz-reason-error') !== null;
      texts.push(inMessage ? node.textContent!.replace(/[\n\t]/g, ' ') : node.textContent!);
    }
    const titles = [...host.querySelectorAll('[title]')].map((e) =>
      e.getAttribute('title')!.replace(/\n/g, ' '),
    );
    for (const text of [...texts, ...titles, ...drawn]) {
      expect(text).not.toMatch(HIDDEN);
    }
    const shown = [...texts, ...titles, ...drawn].join(' ');
    expect(shown).toContain('safe\\u202egnp.exe'); // the details, the dag, the error line
    expect(host.querySelector('.placeviz-details-name')!.textContent).toBe('safe\\u202egnp.exe');
    expect(drawn).toContain('safe\\u202egnp.exe');
    expect(shown).toContain('/job:x\\u202e/device:GPU:0');
    inspector.dispose();
  });
});
