"""The TensorArray ops (TensorArrayV3 and the ops on its handle) and the per-run array they
work on, as TensorFlow's kernels: ``pv.TensorArray`` (``placeviz.graph.tensor_array``) builds
them.

``TensorArrayV3`` makes a ``TensorArrayStore`` each run; its ``handle`` (dtype ``resource``)
names it and its ``flow`` (a float32 scalar) orders the ops on it: every op that changes the
array returns a new flow, reads take the flow they must follow. TF's errors: writing an index
twice or past a fixed size, reading one twice (``clear_after_read``) or never written when the
element shape is not fully known (else zeros), inconsistent shapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops.shape_ops import host_ints
from placeviz.graph.registry import ALL_DEVICES, OpDef, OutputSpec, free_cost, memory_cost
from placeviz.graph.shapes import TensorShape, as_shape

# -- the array a run makes ---------------------------------------------------------------------


def _describe(shape: TensorShape | tuple[int, ...]) -> str:
    """TF's ``DebugString`` of a (partial) shape: ``[2,3]``, ``[?,3]``, ``<unknown>``."""
    dims = shape.dims if isinstance(shape, TensorShape) else shape
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


class TensorArrayStore:
    """One run's array: its elements, which were read (and cleared), and its gradients' arrays
    (by gradient source), as TF's ``TensorArray`` resource."""

    nbytes = 0  # the array's elements are counted where they were made

    def __init__(
        self,
        name: str,
        dtype: dtypes.DType,
        size: int,
        dynamic_size: bool,
        clear_after_read: bool,
        element_shape: TensorShape,
        identical_element_shapes: bool,
        aggregate: bool = False,
    ) -> None:
        self.name = name
        self.dtype = dtype
        self.elements: list[Any] = [None] * size
        self.read_once = [False] * size
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.element_shape = element_shape
        self.identical = identical_element_shapes
        self.aggregate = aggregate
        self.closed = False
        self.grads: dict[str, TensorArrayStore] = {}

    def __repr__(self) -> str:
        return f"<TensorArray {self.name} size={len(self.elements)}>"

    @property
    def size(self) -> int:
        return len(self.elements)

    def _open(self, op: Operation) -> None:
        if self.closed:
            raise InvalidArgumentError(f"TensorArray {self.name} has already been closed.", op=op)

    def write(self, op: Operation, index: int, value: Any) -> None:
        self._open(op)
        if index < 0 or (not self.dynamic_size and index >= self.size):
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Tried to write to index {index} but array is not "
                f"resizeable and size is: {self.size}",
                op=op,
            )
        if index >= self.size:
            grow = index + 1 - self.size
            self.elements.extend([None] * grow)
            self.read_once.extend([False] * grow)
        dtype = dtypes.as_dtype(value.dtype)
        if dtype is not self.dtype:
            raise InvalidArgumentError(
                f"TensorArray dtype is {self.dtype.name} but Op is trying to write dtype "
                f"{dtype.name}",
                op=op,
            )
        shape = tuple(np.shape(value))
        if not self.element_shape.is_compatible_with(shape):
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because "
                f"the value shape is {_describe(shape)} which is incompatible with the "
                f"TensorArray's inferred element shape: {_describe(self.element_shape)} "
                "(consider setting infer_shape=False).",
                op=op,
            )
        if self.identical and not self.element_shape.is_fully_defined:
            self.element_shape = TensorShape(shape)
        if self.read_once[index]:
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because "
                "it has already been read.",
                op=op,
            )
        existing = self.elements[index]
        if existing is None:
            self.elements[index] = value
            return
        if not self.aggregate:
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not write to TensorArray index {index} because "
                "it has already been written to.",
                op=op,
            )
        if np.shape(existing) != shape:
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not aggregate to TensorArray index {index} "
                f"because the existing shape is {_describe(np.shape(existing))} but the new "
                f"input shape is {_describe(shape)}.",
                op=op,
            )
        self.elements[index] = existing + value

    def read(self, op: Operation, xp: Any, index: int) -> Any:
        self._open(op)
        if index < 0 or index >= self.size:
            raise InvalidArgumentError(
                f"Tried to read from index {index} but array size is: {self.size}", op=op
            )
        value = self.elements[index]
        if value is None and self.read_once[index] and self.clear_after_read:
            raise InvalidArgumentError(
                f"TensorArray {self.name}: Could not read index {index} twice because it was "
                "cleared after a previous read (perhaps try setting clear_after_read = false?)",
                op=op,
            )
        self.read_once[index] = True
        if value is None:
            if not self.element_shape.is_fully_defined:
                raise InvalidArgumentError(
                    f"TensorArray {self.name}: Could not read from TensorArray index {index}.  "
                    "Furthermore, the element shape is not fully defined: "
                    f"{_describe(self.element_shape)}.  It is possible you are working with a "
                    "resizeable TensorArray and stop_gradients is not allowing the gradients to "
                    "be written.  If you set the full element_shape property on the forward "
                    "TensorArray, the proper all-zeros tensor will be returned instead of "
                    "incurring this error.",
                    op=op,
                )
            return xp.zeros(self.element_shape.dims, dtype=self.dtype.np)
        if self.clear_after_read:
            self.elements[index] = None
        return value

    def grad(self, source: str) -> TensorArrayStore:
        """The gradient's array for ``source`` (one per ``gradients()`` call): made once, as
        large as this array is now, its writes to one index summed."""
        found = self.grads.get(source)
        if found is None:
            found = TensorArrayStore(
                f"{self.name}@{source}",
                self.dtype,
                self.size,
                False,
                True,
                self.element_shape,
                self.identical,
                aggregate=True,
            )
            self.grads[source] = found
        return found


# -- the ops -----------------------------------------------------------------------------------
def _ints(value: Any) -> list[int]:
    """Indices or lengths as Python ints (from the host, or copied from a GPU)."""
    return list(host_ints(value))


# ops whose output handle has their input handle's data (a gradient array: its forward array's)
_HANDLE_PASSERS = frozenset(
    {"TensorArrayGradV3", "Enter", "Identity", "Switch", "Merge", "Exit", "NextIteration"}
)


def _handle_shape(handle: Tensor) -> TensorShape | None:
    """TF's handle data: the element shape of the array a handle names, when its maker knows
    it (through the frames' Enter and Identity ops, and a gradient array's forward handle)."""
    tensor = handle
    while True:
        op = tensor.op
        if op.type == "TensorArrayV3":
            return op.attrs.get("_element_shape")
        if op.type in _HANDLE_PASSERS:
            tensor = op.inputs[0]
        else:
            return None


def _check_handle(op_type: str, handle: Tensor, flow: Tensor | None) -> None:
    if handle.dtype.base_dtype is not dtypes.resource:
        raise TypeError(
            f"Input 'handle' of '{op_type}' Op has type {handle.dtype.name} that does not match "
            "expected type of resource."
        )
    if flow is not None and flow.dtype.base_dtype is not dtypes.float32:
        raise TypeError(
            f"Input 'flow_in' of '{op_type}' Op has type {flow.dtype.name} that does not match "
            "expected type of float32."
        )


def _check_int32(op_type: str, arg: str, tensor: Tensor, rank: int) -> None:
    if tensor.dtype.base_dtype is not dtypes.int32:
        raise TypeError(
            f"Input '{arg}' of '{op_type}' Op has type {tensor.dtype.name} that does not match "
            "expected type of int32."
        )
    if tensor.shape.ndims not in (None, rank):
        raise ValueError(f"Shape must be rank {rank} but is rank {tensor.shape.ndims}")


_HANDLE: OutputSpec = (TensorShape([2]), dtypes.resource)
_FLOW: OutputSpec = (TensorShape(()), dtypes.float32)


def _infer_create(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_int32("TensorArrayV3", "size", inputs[0], 0)
    return [_HANDLE, _FLOW]


def _create_kernel(xp: Any, op: Operation, state: Any) -> Any:
    attrs = op.attrs
    shape = as_shape(attrs["element_shape"])

    def create(size: Any) -> tuple[Any, Any]:
        store = TensorArrayStore(
            attrs["tensor_array_name"] or op.name,
            attrs["dtype"],
            int(size),
            attrs["dynamic_size"],
            attrs["clear_after_read"],
            shape,
            attrs["identical_element_shapes"],
        )
        return store, np.float32(0.0)

    return create


def _infer_grad(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("TensorArrayGradV3", inputs[0], inputs[1])
    return [_HANDLE, _FLOW]


def _grad_kernel(xp: Any, op: Operation, state: Any) -> Any:
    source = op.attrs["source"]

    def grad(store: TensorArrayStore, flow: Any) -> tuple[Any, Any]:
        store._open(op)
        return store.grad(source), flow

    return grad


def _infer_write(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    handle, index, value, flow = inputs
    _check_handle("TensorArrayWriteV3", handle, flow)
    _check_int32("TensorArrayWriteV3", "index", index, 0)
    known = _handle_shape(handle)
    if known is not None and not known.is_compatible_with(value.shape):
        raise ValueError(f"Shapes {value.shape} and {known} are not compatible")
    return [_FLOW]


def _write_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def write(store: TensorArrayStore, index: Any, value: Any, flow: Any) -> Any:
        store.write(op, int(index), value)
        return flow

    return write


def _infer_read(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    handle, index, flow = inputs
    _check_handle("TensorArrayReadV3", handle, flow)
    _check_int32("TensorArrayReadV3", "index", index, 0)
    known = _handle_shape(handle)
    return [(known if known is not None else TensorShape(None), attrs["dtype"])]


def _read_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def read(store: TensorArrayStore, index: Any, flow: Any) -> Any:
        return store.read(op, xp, int(index))

    return read


def _infer_gather(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    handle, indices, flow = inputs
    _check_handle("TensorArrayGatherV3", handle, flow)
    _check_int32("TensorArrayGatherV3", "indices", indices, 1)
    known = _handle_shape(handle)
    if known is None:
        known = as_shape(attrs["element_shape"])
    if known.dims is None:
        return [(TensorShape(None), attrs["dtype"])]
    first = indices.shape.dims[0] if indices.shape.dims else None
    return [(TensorShape([first, *known.dims]), attrs["dtype"])]


def _gather_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def gather(store: TensorArrayStore, indices: Any, flow: Any) -> Any:
        wanted = _ints(indices)
        if not wanted:
            if not store.element_shape.is_fully_defined:
                raise InvalidArgumentError(
                    f"TensorArray has size zero, but element shape "
                    f"{_describe(store.element_shape)} is not fully defined. Currently only "
                    "static shapes are supported when packing zero-size TensorArrays.",
                    op=op,
                )
            return xp.zeros((0, *store.element_shape.dims), dtype=store.dtype.np)
        values = [store.read(op, xp, i) for i in wanted]
        first = np.shape(values[0])
        for position, value in enumerate(values[1:], 1):
            if np.shape(value) != first:
                raise InvalidArgumentError(
                    f"TensorArray has inconsistent shapes.  Index 0 has shape: "
                    f"{_describe(first)} but index {position} has shape: "
                    f"{_describe(np.shape(value))}",
                    op=op,
                )
        return xp.stack(values)

    return gather


def _infer_scatter(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    handle, indices, _, flow = inputs
    _check_handle("TensorArrayScatterV3", handle, flow)
    _check_int32("TensorArrayScatterV3", "indices", indices, 1)
    return [_FLOW]


def _scatter_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def scatter(store: TensorArrayStore, indices: Any, value: Any, flow: Any) -> Any:
        wanted = _ints(indices)
        if np.ndim(value) == 0:
            raise InvalidArgumentError(
                "Expected value for elements to be at least a vector, but received shape: []",
                op=op,
            )
        if len(wanted) != np.shape(value)[0]:
            raise InvalidArgumentError(
                f"Expected len(indices) == values.shape[0], but saw: {len(wanted)} vs. "
                f"{np.shape(value)[0]}",
                op=op,
            )
        largest = max(wanted, default=-1)
        if largest >= store.size and not store.dynamic_size:
            raise InvalidArgumentError(
                f"Max scatter index must be < array size ({largest} vs. {store.size})", op=op
            )
        for position, index in enumerate(wanted):
            store.write(op, index, value[position])
        return flow

    return scatter


def _infer_concat(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    handle, flow = inputs
    _check_handle("TensorArrayConcatV3", handle, flow)
    rest = as_shape(attrs["element_shape_except0"])
    value = TensorShape(None) if rest.dims is None else TensorShape([None, *rest.dims])
    return [(value, attrs["dtype"]), (TensorShape([None]), dtypes.int64)]


def _concat_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def concat(store: TensorArrayStore, flow: Any) -> tuple[Any, Any]:
        if store.size == 0:
            rest = store.element_shape[1:]
            if not rest.is_fully_defined:
                raise InvalidArgumentError(
                    f"TensorArray has size zero, but element_shape_except0 {_describe(rest)} is "
                    "not fully defined. Currently only static shapes are supported when "
                    "concatenating zero-size TensorArrays.",
                    op=op,
                )
            empty = xp.zeros((0, *rest.dims), dtype=store.dtype.np)
            return empty, np.zeros(0, dtype=np.int64)
        values = [store.read(op, xp, i) for i in range(store.size)]
        for position, value in enumerate(values):
            if np.ndim(value) == 0:
                raise InvalidArgumentError(
                    f"Concat saw a scalar shape at index {position} but requires at least "
                    "vectors.  Did you mean to call TensorArray.stack instead?",
                    op=op,
                )
        first = np.shape(values[0])[1:]
        for position, value in enumerate(values[1:], 1):
            if np.shape(value)[1:] != first:
                raise InvalidArgumentError(
                    "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) "
                    f"shape: {_describe(first)} but index {position} has (excepting dimension "
                    f"0) shape: {_describe(np.shape(value)[1:])}",
                    op=op,
                )
        lengths = np.asarray([np.shape(v)[0] for v in values], dtype=np.int64)
        return xp.concatenate(values), lengths

    return concat


def _infer_split(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    handle, _, lengths, flow = inputs
    _check_handle("TensorArraySplitV3", handle, flow)
    if lengths.dtype.base_dtype is not dtypes.int64:
        raise TypeError(
            f"Input 'lengths' of 'TensorArraySplitV3' Op has type {lengths.dtype.name} that "
            "does not match expected type of int64."
        )
    return [_FLOW]


def _split_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def split(store: TensorArrayStore, value: Any, lengths: Any, flow: Any) -> Any:
        sizes = _ints(lengths)
        if np.ndim(value) == 0:
            raise InvalidArgumentError(
                "Expected value to be at least a vector, but received shape: []", op=op
            )
        if sum(sizes) != np.shape(value)[0]:
            raise InvalidArgumentError(
                "Expected sum of lengths to be equal to values.shape[0], but sum of lengths "
                f"is: {sum(sizes)} and value's shape is: {_describe(np.shape(value))}",
                op=op,
            )
        if len(sizes) > store.size and not store.dynamic_size:
            raise InvalidArgumentError(
                f"TensorArray's size is not equal to the size of lengths ({store.size} vs. "
                f"{len(sizes)}), and the TensorArray is not marked as dynamically resizeable",
                op=op,
            )
        start = 0
        for index, length in enumerate(sizes):
            store.write(op, index, value[start : start + length])
            start += length
        return flow

    return split


def _infer_size(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("TensorArraySizeV3", inputs[0], inputs[1])
    return [(TensorShape(()), dtypes.int32)]


def _size_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def size(store: TensorArrayStore, flow: Any) -> Any:
        store._open(op)
        return np.int32(store.size)

    return size


def _infer_close(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    _check_handle("TensorArrayCloseV3", inputs[0], None)
    return []


def _close_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def close(store: TensorArrayStore) -> None:
        store._open(op)
        store.closed = True

    return close


# TF keeps the handle, sizes and indices in host memory on a GPU; placeviz places the ops where
# TF does and does not model host-memory arguments.
_RESOURCE_OPS = (
    ("TensorArrayV3", _infer_create, _create_kernel, free_cost, True),
    ("TensorArrayGradV3", _infer_grad, _grad_kernel, free_cost, True),
    ("TensorArrayWriteV3", _infer_write, _write_kernel, free_cost, False),
    ("TensorArrayReadV3", _infer_read, _read_kernel, free_cost, False),
    ("TensorArrayGatherV3", _infer_gather, _gather_kernel, memory_cost, False),
    ("TensorArrayScatterV3", _infer_scatter, _scatter_kernel, memory_cost, False),
    ("TensorArrayConcatV3", _infer_concat, _concat_kernel, memory_cost, True),
    ("TensorArraySplitV3", _infer_split, _split_kernel, memory_cost, False),
    ("TensorArraySizeV3", _infer_size, _size_kernel, free_cost, False),
    ("TensorArrayCloseV3", _infer_close, _close_kernel, free_cost, False),
)
for _type, _infer, _kernel, _cost, _multi in _RESOURCE_OPS:
    registry.register(
        OpDef(
            type=_type,
            infer=_infer,
            kernel=_kernel,
            cost=_cost,
            supported=ALL_DEVICES,
            stateful=True,
            multi_output=_multi,
        )
    )
