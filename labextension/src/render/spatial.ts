/**
 * A uniform grid over boxes, so hover hit-tests and viewport culling look at a few cells instead
 * of scanning 100,000 boxes. Each box is filed under the cell holding its centre; queries widen
 * by half the largest box to catch boxes that overlap from a neighbouring cell.
 */

export class SpatialGrid {
  private readonly cellSize: number;
  private readonly columns: number;
  private readonly rows: number;
  private readonly cellStart: Int32Array;
  private readonly items: Int32Array;

  private readonly boxWidth: number;
  private readonly boxHeight: number;

  constructor(
    private readonly x: Float32Array,
    private readonly y: Float32Array,
    private readonly w: Float32Array,
    private readonly h: Float32Array,
    width: number,
    height: number,
  ) {
    const count = x.length;
    const boxWidth = w.reduce((m, v) => Math.max(m, v), 1);
    const boxHeight = h.reduce((m, v) => Math.max(m, v), 1);
    this.boxWidth = boxWidth;
    this.boxHeight = boxHeight;
    // About four boxes per cell on average, and never smaller than a box.
    const area = Math.max(width * height, 1);
    this.cellSize = Math.max(boxWidth, boxHeight, Math.sqrt(area / Math.max(count / 4, 1)));
    this.columns = Math.max(1, Math.ceil(width / this.cellSize) + 1);
    this.rows = Math.max(1, Math.ceil(height / this.cellSize) + 1);
    this.cellStart = new Int32Array(this.columns * this.rows + 1);
    const cellOf = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      cellOf[i] = this.cellAt(x[i] + w[i] / 2, y[i] + h[i] / 2);
      this.cellStart[cellOf[i] + 1]++;
    }
    for (let c = 0; c + 1 < this.cellStart.length; c++) {
      this.cellStart[c + 1] += this.cellStart[c];
    }
    const fill = this.cellStart.slice(0, this.columns * this.rows);
    this.items = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      this.items[fill[cellOf[i]]++] = i;
    }
  }

  /** The box under the point, or -1. */
  hitTest(px: number, py: number): number {
    let found = -1;
    this.query(px, py, px, py, (i) => {
      if (
        px >= this.x[i] &&
        px <= this.x[i] + this.w[i] &&
        py >= this.y[i] &&
        py <= this.y[i] + this.h[i]
      ) {
        found = i;
      }
    });
    return found;
  }

  /** Call `visit` for each box that may intersect the rectangle (a superset, cell-grained). */
  query(x0: number, y0: number, x1: number, y1: number, visit: (box: number) => void): void {
    const halfW = this.boxWidth / 2;
    const halfH = this.boxHeight / 2;
    const c0 = this.column(x0 - halfW);
    const c1 = this.column(x1 + halfW);
    const r0 = this.row(y0 - halfH);
    const r1 = this.row(y1 + halfH);
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const cell = r * this.columns + c;
        for (let k = this.cellStart[cell]; k < this.cellStart[cell + 1]; k++) {
          visit(this.items[k]);
        }
      }
    }
  }

  private column(x: number): number {
    return Math.min(this.columns - 1, Math.max(0, Math.floor(x / this.cellSize)));
  }

  private row(y: number): number {
    return Math.min(this.rows - 1, Math.max(0, Math.floor(y / this.cellSize)));
  }

  private cellAt(x: number, y: number): number {
    return this.row(y) * this.columns + this.column(x);
  }
}
