/**
 * The device legend: one entry per device, grouped by job/task and physical device (logical GPUs
 * under the GPU they share). Clicking an entry filters the views to that device; again, clears.
 * The inspector calls update(change) after store changes (view.ts); the legend follows the filter
 * by itself.
 */
import { element } from './dom';
import { devicePalette, legendGroups } from './colours';
import { shortDeviceName } from './format';
import type { PlacementStore } from './store';
import type { DeviceRecord } from './types';
import type { View } from './view';
import type { ViewState } from './viewstate';
import { visibleText } from './visible';

export function renderLegend(parent: HTMLElement, store: PlacementStore, state: ViewState): View {
  const doc = parent.ownerDocument;
  const root = parent.appendChild(element(doc, 'div', 'placeviz-legend'));
  let shownDevices: readonly DeviceRecord[] | null = null;

  const make = <K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string) =>
    element(doc, tag, className, text);

  const entry = (device: DeviceRecord, colour: string): HTMLElement => {
    const button = make('button', 'placeviz-legend-entry');
    button.setAttribute('type', 'button');
    button.dataset.device = device.name;
    button.dataset.kind = device.kind;
    const name = visibleText(device.name);
    button.title = device.description ? `${name}\n${visibleText(device.description)}` : name;
    const swatch = make('span', 'placeviz-legend-swatch');
    swatch.style.background = colour;
    button.append(swatch, make('span', 'placeviz-legend-name', shortDeviceName(device.name)));
    if (device.kind !== 'real') {
      button.append(make('span', 'placeviz-legend-note', `(${device.kind})`));
    }
    button.addEventListener('click', () => {
      state.set({ filter: state.get('filter') === device.name ? '' : device.name });
    });
    return button;
  };

  const build = () => {
    shownDevices = store.devices;
    const palette = devicePalette(store.devices);
    const groups = legendGroups(store.devices);
    const showHosts = groups.length > 1;
    root.replaceChildren(
      ...groups.map((group) => {
        const host = make('div', 'placeviz-legend-host');
        if (showHosts) {
          const name = make('div', 'placeviz-legend-host-name', group.host || 'other devices');
          const process = processOf(group.physical[0].devices[0]);
          if (process) {
            name.append(make('span', 'placeviz-legend-process', process));
          }
          host.append(name);
        }
        for (const physical of group.physical) {
          const box = make('div', 'placeviz-legend-physical');
          const shared = physical.devices.length > 1 || physical.devices[0].kind === 'logical';
          if (shared) {
            box.append(make('div', 'placeviz-legend-physical-name', physical.parent));
          }
          for (const device of physical.devices) {
            box.append(entry(device, palette.get(device.id)?.colour ?? 'transparent'));
          }
          host.append(box);
        }
        return host;
      }),
    );
  };

  const markActive = () => {
    const filter = state.get('filter');
    for (const button of root.querySelectorAll<HTMLElement>('.placeviz-legend-entry')) {
      const active = button.dataset.device === filter;
      button.classList.toggle('placeviz-legend-active', active);
      button.setAttribute('aria-pressed', String(active));
    }
  };

  const update = () => {
    if (store.devices !== shownDevices) {
      build();
    }
    markActive();
  };
  update();
  const stop = state.listen((changed) => {
    if (changed.has('filter')) {
      markActive();
    }
  });
  return {
    update(change) {
      if (change.tables) {
        update(); // only the devices table is drawn
      }
    },
    dispose() {
      stop();
      root.remove();
    },
  };
}

/** Where a task's ops run: its process and, for a cluster task, its address. */
export function processOf(device: DeviceRecord): string {
  if (device.pid === undefined) {
    return '';
  }
  const address = device.address ? ` at ${visibleText(device.address)}` : '';
  return ` · process ${device.pid}${address}`;
}
