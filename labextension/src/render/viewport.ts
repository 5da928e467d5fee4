/** Pan and zoom of the DAG: screen = world * scale + offset, in CSS pixels. */

export const MIN_SCALE = 0.002;
export const MAX_SCALE = 4;

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

  /**
   * Show the whole `width` x `height` world, at most at 1:1, centred. A graph so large that its
   * boxes would shrink below `readable` is shown from its top instead, as wide as fits.
   */
  fit(width: number, height: number, margin = 16, readable = 0.1): void {
    const across = (this.width - 2 * margin) / Math.max(width, 1);
    const down = (this.height - 2 * margin) / Math.max(height, 1);
    const whole = Math.min(across, down);
    if (whole >= readable) {
      this.scale = Math.min(1, whole);
      this.centreOn(width / 2, height / 2);
      return;
    }
    this.scale = Math.min(1, Math.max(readable, across));
    this.offsetX = this.width / 2 - (width / 2) * this.scale;
    this.offsetY = margin;
  }

  centreOn(worldX: number, worldY: number): void {
    this.offsetX = this.width / 2 - worldX * this.scale;
    this.offsetY = this.height / 2 - worldY * this.scale;
  }
}
