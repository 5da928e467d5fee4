import { afterEach, describe, expect, it } from 'vitest';
import { escapePlotlyText, loadPlotly, setPlotlyLoader, type PlotlyModule } from './plotly';

afterEach(() => setPlotlyLoader(null));

describe('escapePlotlyText', () => {
  it('turns markup into text', () => {
    expect(escapePlotlyText('<img src=x onerror=alert(1)>')).toBe(
      '&lt;img src=x onerror=alert(1)&gt;',
    );
    expect(escapePlotlyText('a & b <br> c')).toBe('a &amp; b &lt;br&gt; c');
    expect(escapePlotlyText('&lt;')).toBe('&amp;lt;');
  });

  it('leaves ordinary names alone and stringifies anything', () => {
    expect(escapePlotlyText('tower_0/dense/MatMul:0')).toBe('tower_0/dense/MatMul:0');
    expect(escapePlotlyText(42)).toBe('42');
    expect(escapePlotlyText(null)).toBe('');
  });
});

describe('loadPlotly', () => {
  it('loads once and shares the module', async () => {
    let loads = 0;
    const fake = { newPlot: () => undefined } as unknown as PlotlyModule;
    setPlotlyLoader(async () => {
      loads += 1;
      return fake;
    });
    const [a, b] = await Promise.all([loadPlotly(), loadPlotly()]);
    expect(await loadPlotly()).toBe(fake);
    expect(a).toBe(fake);
    expect(b).toBe(fake);
    expect(loads).toBe(1);
  });

  it('retries after a failed load', async () => {
    let loads = 0;
    const fake = { newPlot: () => undefined } as unknown as PlotlyModule;
    setPlotlyLoader(async () => {
      loads += 1;
      if (loads === 1) {
        throw new Error('chunk failed');
      }
      return fake;
    });
    await expect(loadPlotly()).rejects.toThrow('chunk failed');
    await expect(loadPlotly()).resolves.toBe(fake);
    expect(loads).toBe(2);
  });
});
