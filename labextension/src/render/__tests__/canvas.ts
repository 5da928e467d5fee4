import { vi } from 'vitest';

/**
 * A 2D context that accepts every call and records the text drawn (6 px per character), the
 * stroke styles of the paths stroked (not of empty ones) and the alphas filled with.
 */
export function fakeContext(): {
  ctx: CanvasRenderingContext2D;
  texts: string[];
  strokes: unknown[];
  fills: unknown[];
} {
  const texts: string[] = [];
  const strokes: unknown[] = [];
  const fills: unknown[] = [];
  let shapes = 0;
  const props: Record<string | symbol, unknown> = {
    fillText: (text: string) => texts.push(text),
    measureText: (text: string) => ({ width: text.length * 6 }),
    beginPath: () => {
      shapes = 0;
    },
    rect: () => shapes++,
    moveTo: () => shapes++,
    stroke: () => {
      if (shapes > 0) {
        strokes.push(props.strokeStyle);
      }
    },
    fill: () => fills.push(props.globalAlpha),
  };
  const ctx = new Proxy(props, {
    get: (target, key) => (key in target ? target[key] : () => undefined),
    set: (target, key, value) => {
      target[key] = value;
      return true;
    },
  });
  return { ctx: ctx as unknown as CanvasRenderingContext2D, texts, strokes, fills };
}

/** Every canvas of the page gets `context` (default: a new fake one): jsdom's have none. */
export function useContext(
  context: CanvasRenderingContext2D | null = fakeContext().ctx,
): CanvasRenderingContext2D | null {
  vi.spyOn(HTMLCanvasElement.prototype, 'getContext').mockReturnValue(
    context as unknown as ReturnType<HTMLCanvasElement['getContext']>,
  );
  return context;
}
