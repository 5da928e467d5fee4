// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { renderKey } from './dagkey';
import type { BoxColours } from './dagcolour';

const theme = { transfer: 'rgb(170, 0, 120)', mismatch: 'rgb(200, 0, 0)' };

describe('renderKey', () => {
  it('keys both red marks: a failed or unplaced op, and one not on the device it asked for', () => {
    const root = document.createElement('div');
    renderKey(root, 'device', { range: null } as unknown as BoxColours, theme);
    const texts = [...root.querySelectorAll('.placeviz-key-text')].map((t) => t.textContent);
    expect(texts).toContain('failed / not placed');
    expect(texts).toContain('not on the device it asked for');
    const mismatch = root.querySelector<HTMLElement>(
      '.placeviz-key-mismatch .placeviz-key-swatch',
    )!;
    expect(mismatch.style.border).toBe(`2px solid ${theme.mismatch}`);
    const alert = root.querySelector<HTMLElement>('.placeviz-key-alert .placeviz-key-swatch')!;
    expect(alert.style.border).toBe(`3px solid ${theme.mismatch}`);
  });

  it('keys transfers between cluster tasks only where the graph has them', () => {
    const root = document.createElement('div');
    const texts = () => [...root.querySelectorAll('.placeviz-key-text')].map((t) => t.textContent);
    renderKey(root, 'device', { range: null } as unknown as BoxColours, theme);
    expect(texts()).not.toContain('between tasks (network)');
    renderKey(root, 'device', { range: null } as unknown as BoxColours, theme, true);
    expect(texts()).toContain('between tasks (network)');
  });
});
