/**
 * Decoding a live `events` message: ten little-endian binary buffers, one per column
 * (docs/inspector.md). ipywidgets hands them over as DataViews into a larger buffer, at offsets
 * that need not be aligned for the column's type.
 */
import { COLUMN_ARRAYS, COLUMN_NAMES, type ColumnName, type EventBatch } from './types';

type BufferLike = ArrayBuffer | DataView | ArrayBufferView;

interface ColumnType {
  size: number;
  make(buffer: ArrayBuffer, offset: number, length: number): EventBatch[ColumnName];
  read(view: DataView, offset: number): number;
}

type ColumnArrayType = (typeof COLUMN_ARRAYS)[ColumnName];
const READERS = new Map<ColumnArrayType, ColumnType['read']>([
  [Int8Array, (v, o) => v.getInt8(o)],
  [Int16Array, (v, o) => v.getInt16(o, true)],
  [Int32Array, (v, o) => v.getInt32(o, true)],
  [Float64Array, (v, o) => v.getFloat64(o, true)],
]);

/** Each column's size, view and unaligned reader, from its type in the contract. */
const COLUMN_TYPES = Object.fromEntries(
  COLUMN_NAMES.map((name) => {
    const TypedArray = COLUMN_ARRAYS[name];
    const type: ColumnType = {
      size: TypedArray.BYTES_PER_ELEMENT,
      make: (b, o, n) => new TypedArray(b, o, n),
      read: READERS.get(TypedArray)!,
    };
    return [name, type];
  }),
) as Record<ColumnName, ColumnType>;

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The batch of `content.count` events in `buffers`; throws naming the first bad column. */
export function decodeBatch(content: { count: number }, buffers: BufferLike[]): EventBatch {
  const count = content.count;
  if (!Number.isInteger(count) || count < 0) {
    throw new Error(`events message: count must be a non-negative integer, got ${String(count)}`);
  }
  if (buffers.length !== COLUMN_NAMES.length) {
    throw new Error(
      `events message: expected ${COLUMN_NAMES.length} buffers (${COLUMN_NAMES.join(', ')}), ` +
        `got ${buffers.length}`,
    );
  }
  const columns: Partial<Record<ColumnName, EventBatch[ColumnName]>> = {};
  COLUMN_NAMES.forEach((name, i) => {
    columns[name] = decodeColumn(name, count, buffers[i]);
  });
  return { count, ...columns } as EventBatch;
}

function decodeColumn(name: ColumnName, count: number, buffer: BufferLike): EventBatch[ColumnName] {
  const type = COLUMN_TYPES[name];
  const view = asView(buffer);
  if (view.byteLength !== count * type.size) {
    throw new Error(
      `events message: column '${name}' has ${view.byteLength} bytes, expected ` +
        `${count * type.size} (${count} events of ${type.size} bytes)`,
    );
  }
  if (LITTLE_ENDIAN_HOST && view.byteOffset % type.size === 0) {
    // Aligned: view the column in place, no copy.
    return type.make(view.buffer as ArrayBuffer, view.byteOffset, count);
  }
  const column = type.make(new ArrayBuffer(count * type.size), 0, count);
  for (let i = 0; i < count; i++) {
    column[i] = type.read(view, i * type.size);
  }
  return column;
}

function asView(buffer: BufferLike): DataView {
  if (buffer instanceof DataView) {
    return buffer;
  }
  if (ArrayBuffer.isView(buffer)) {
    return new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }
  return new DataView(buffer);
}
