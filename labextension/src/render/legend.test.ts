// @vitest-environment jsdom
import { afterEach, describe, expect, it } from 'vitest';
import { renderLegend } from './legend';
import { PlacementStore } from './store';
import { ViewState } from './viewstate';
import { GPU0, GPU1, SIM, device, smallDocument } from './__tests__/fixtures';
import { EVERYTHING } from './__tests__/follow';

const EVIL = '/job:<img src=x onerror=alert(1)>/replica:0/task:0/device:GPU:7';

function setup() {
  const doc = smallDocument();
  doc.devices.push(
    device(3, SIM, { kind: 'simulated', parent: '/physical_device:GPU:2' }),
    device(4, EVIL),
  );
  const store = PlacementStore.fromDocument(doc);
  const state = new ViewState();
  const parent = document.createElement('div');
  document.body.append(parent);
  const legend = renderLegend(parent, store, state);
  const entries = () => [...parent.querySelectorAll<HTMLElement>('.placeviz-legend-entry')];
  return { store, state, parent, legend, entries };
}

afterEach(() => {
  document.body.replaceChildren();
});

describe('renderLegend', () => {
  it('shows one entry per device with its full name and kind', () => {
    const { entries } = setup();
    const byName = new Map(entries().map((e) => [e.dataset.device, e.dataset.kind]));
    expect(entries()).toHaveLength(5);
    expect(byName.get(GPU0)).toBe('real');
    expect(byName.get(GPU1)).toBe('logical');
    expect(byName.get(SIM)).toBe('simulated');
    expect(byName.get(EVIL)).toBe('real');
  });

  it('marks simulated devices in words and groups logical GPUs under their GPU', () => {
    const { parent, entries } = setup();
    const simulated = entries().find((e) => e.dataset.device === SIM)!;
    expect(simulated.textContent).toContain('(simulated)');
    const group = entries()
      .find((e) => e.dataset.device === GPU1)!
      .closest('.placeviz-legend-physical')!;
    expect(group.querySelector('.placeviz-legend-physical-name')?.textContent).toBe(
      '/physical_device:GPU:0',
    );
    expect(group.querySelectorAll('.placeviz-legend-entry')).toHaveLength(2);
    // two job/task groups: localhost and the odd one
    expect(parent.querySelectorAll('.placeviz-legend-host')).toHaveLength(2);
  });

  it('names each task group with its process and address', () => {
    const doc = smallDocument();
    const ps = '/job:ps/replica:0/task:0/device:CPU:0';
    doc.devices.push(device(3, ps, { pid: 4242, address: '127.0.0.1:2222' }));
    const parent = document.createElement('div');
    renderLegend(parent, PlacementStore.fromDocument(doc), new ViewState());
    const hosts = [...parent.querySelectorAll('.placeviz-legend-host-name')].map(
      (h) => h.textContent,
    );
    expect(hosts).toContain('/job:ps/replica:0/task:0 · process 4242 at 127.0.0.1:2222');
  });

  it('keeps a device name with HTML as literal text', () => {
    const { parent, entries } = setup();
    const evil = entries().find((e) => e.dataset.device === EVIL)!;
    expect(evil.textContent).toContain('<img src=x onerror=alert(1)>');
    expect(parent.querySelector('img')).toBeNull();
  });

  it('toggles the filter to a device on click', () => {
    const { state, entries } = setup();
    const gpu = entries().find((e) => e.dataset.device === GPU0)!;
    gpu.click();
    expect(state.get('filter')).toBe(GPU0);
    expect(gpu.classList.contains('placeviz-legend-active')).toBe(true);
    gpu.click();
    expect(state.get('filter')).toBe('');
    expect(gpu.classList.contains('placeviz-legend-active')).toBe(false);
  });

  it('rebuilds when the device table changes and removes itself on dispose', () => {
    const { store, parent, legend, entries } = setup();
    store.applyTables({ ...smallDocument(), devices: [device(0, GPU0)] });
    legend.update(EVERYTHING);
    expect(entries().map((e) => e.dataset.device)).toEqual([GPU0]);
    legend.dispose();
    expect(parent.querySelector('.placeviz-legend')).toBeNull();
  });
});
