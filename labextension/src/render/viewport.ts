/** Pan and zoom of the DAG: screen = world * scale + offset, in CSS pixels. */

export const MIN_SCALE = 0.002;
export const MAX_SCALE = 4;
/** Space kept free around the graph when it is fitted, CSS px. */
export const FIT_MARGIN = 16;

/** The zoom that shows a `width` x `height` world whole on a `view` canvas, at most `most`. */
export function fitScale(
  view: { width: number; height: number },
  width: number,
  height: number,
  most = 1,
  margin = FIT_MARGIN,
): number {
  const across = (view.width - 2 * margin) / Math.max(width, 1);
  const down = (view.height - 2 * margin) / Math.max(height, 1);
  return Math.max(MIN_SCALE, Math.min(most, across, down));
}

export class Viewport {
  scale = 1;
  offsetX = 0;
  offsetY = 0;
  width = 0;
  height = 0;

  toWorldX(screenX: number): number {
    return (screenX - this.offsetX) / this.scale;
  }

  toWorldY(screenY: number): number {
    return (screenY - this.offsetY) / this.scale;
  }

  panBy(dx: number, dy: number): void {
    this.offsetX += dx;
    this.offsetY += dy;
  }

  /** Zoom by `factor`, keeping the world point under (screenX, screenY) where it is. */
  zoomAt(screenX: number, screenY: number, factor: number): void {
    const worldX = this.toWorldX(screenX);
    const worldY = this.toWorldY(screenY);
    this.scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.scale * factor));
    this.offsetX = screenX - worldX * this.scale;
    this.offsetY = screenY - worldY * this.scale;
  }

  /** Show the whole `width` x `height` world, at most at 1:1, centred. */
  fit(width: number, height: number): void {
    this.scale = fitScale(this, width, height);
    this.centreOn(width / 2, height / 2);
  }

  /**
   * Bring the world rectangle into view: centred on it, zoomed out as far as it takes to show
   * all of it (never zoomed in).
   */
  show(x: number, y: number, width: number, height: number): void {
    this.scale = fitScale(this, width, height, this.scale);
    this.centreOn(x + width / 2, y + height / 2);
  }

  centreOn(worldX: number, worldY: number): void {
    this.offsetX = this.width / 2 - worldX * this.scale;
    this.offsetY = this.height / 2 - worldY * this.scale;
  }
}
