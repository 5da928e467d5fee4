import { describe, expect, it } from 'vitest';
import { devicePalette, legendGroups, logNormalizer, sequentialColour } from './colours';
import { device } from './__tests__/fixtures';

const devices = [
  device(0, '/job:localhost/replica:0/task:0/device:CPU:0'),
  device(1, '/job:localhost/replica:0/task:0/device:GPU:0', {
    parent: '/physical_device:GPU:0',
    kind: 'logical',
  }),
  device(2, '/job:localhost/replica:0/task:0/device:GPU:1', {
    parent: '/physical_device:GPU:0',
    kind: 'logical',
    index: 1,
  }),
  device(3, '/job:localhost/replica:0/task:0/device:GPU:2', {
    parent: '/physical_device:GPU:1',
    kind: 'simulated',
    index: 2,
  }),
  device(4, '/job:worker/replica:0/task:1/device:GPU:0', { parent: '/physical_device:GPU:2' }),
];

function hue(colour: string): number {
  const match = /^hsl\((\d+), (\d+)%, (\d+)%\)$/.exec(colour);
  expect(match, colour).not.toBeNull();
  return Number(match![1]);
}

describe('devicePalette', () => {
  const palette = devicePalette(devices);

  it('shades logical GPUs of one physical GPU in one hue', () => {
    const a = palette.get(1)!.colour;
    const b = palette.get(2)!.colour;
    expect(a).not.toBe(b);
    expect(hue(a)).toBe(hue(b));
    expect(hue(palette.get(3)!.colour)).not.toBe(hue(a));
  });

  it('draws CPUs grey and marks simulated devices', () => {
    expect(palette.get(0)!.colour).toMatch(/^hsl\(0, 0%, /);
    expect(palette.get(3)!.simulated).toBe(true);
    expect(palette.get(1)!.simulated).toBe(false);
  });

  it('tints the CPUs of several cluster tasks apart, in muted hues', () => {
    const cpus = [0, 1].map((task) =>
      device(task, `/job:ps/replica:0/task:${task}/device:CPU:0`, {
        parent: `/job:ps/task:${task}/physical_device:CPU:0`,
      }),
    );
    const palette = devicePalette(cpus);
    const [a, b] = cpus.map((d) => palette.get(d.id)!.colour);
    expect(a).not.toBe(b);
    for (const colour of [a, b]) {
      expect(colour).toMatch(/^hsl\(\d+, 24%, \d+%\)$/);
    }
  });

  it('gives the same colours whatever the order of the table', () => {
    const shuffled = devicePalette([...devices].reverse());
    for (const d of devices) {
      expect(shuffled.get(d.id)).toEqual(palette.get(d.id));
    }
  });
});

describe('legendGroups', () => {
  it('groups by task, then physical device', () => {
    const groups = legendGroups(devices);
    expect(groups.map((g) => g.host)).toEqual([
      '/job:localhost/replica:0/task:0',
      '/job:worker/replica:0/task:1',
    ]);
    const local = groups[0].physical;
    expect(local.map((p) => p.parent)).toEqual([
      '/physical_device:CPU:0',
      '/physical_device:GPU:0',
      '/physical_device:GPU:1',
    ]);
    expect(local[1].devices.map((d) => d.id)).toEqual([1, 2]);
  });
});

describe('sequential scales', () => {
  it('maps a log range onto [0, 1]', () => {
    const scale = logNormalizer([10, 100, 1000, NaN, 0]);
    expect(scale(10)).toBe(0);
    expect(scale(100)).toBeCloseTo(0.5);
    expect(scale(1000)).toBe(1);
    expect(Number.isNaN(scale(0))).toBe(true);
    expect(sequentialColour(0, 'time')).not.toBe(sequentialColour(1, 'time'));
    expect(sequentialColour(0, 'time')).toBe('rgb(68, 1, 84)');
  });
});
