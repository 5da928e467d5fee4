"""``t[...]``: TensorFlow's ``StridedSlice`` and the ``_slice_helper`` that encodes an index.

An index (ints, slices with steps, ``...``, ``None`` for a new axis, scalar int tensors) becomes
three int32 vectors, ``strided_slice/stack``, ``stack_1`` and ``stack_2`` (begin, end,
strides; a ``Pack`` where a tensor is among them), and five bit masks saying which entries have
no begin or end, are the ellipsis, add an axis or pick one element (dropping the axis). The
kernel rebuilds the NumPy index from them, once per array (``run_derived``).
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, is_tensor_like
from placeviz.graph.ops import array_ops, constant_op
from placeviz.graph.ops._build import make_op, op_scope, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.shape_ops import (
    check_shape_tensor,
    constant_value,
    host_ints,
    run_derived,
    shape_from_tensor,
)
from placeviz.graph.registry import OpDef, memory_cost
from placeviz.graph.shapes import Dim, ShapeError, TensorShape

MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")
Entry = Any  # an int, a slice, Ellipsis or None (a new axis): one item of a NumPy index
UNKNOWN = object()  # a bound construction does not know yet (a shrink's index)


def index_key(
    begin: Sequence[int | None], end: Sequence[int | None], strides: Sequence[int | None],
    masks: Mapping[str, int],
) -> tuple[Entry, ...]:  # fmt: skip
    """The NumPy index the vectors and masks encode (a bound construction does not know yet is
    None in a slice, ``UNKNOWN`` as an index)."""
    key: list[Entry] = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides, strict=True)):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            key.append(Ellipsis)
        elif masks["new_axis_mask"] & bit:
            key.append(None)
        elif masks["shrink_axis_mask"] & bit:
            key.append(UNKNOWN if b is None else b)
        else:
            start = None if masks["begin_mask"] & bit else b
            stop = None if masks["end_mask"] & bit else e
            key.append(builtins.slice(start, stop, s))
    return tuple(key)


def _sliced_shape(dims: Sequence[Dim], key: tuple[Entry, ...], known: bool) -> list[Dim]:
    """The static shape ``dims[key]`` has; with ``known`` False some bounds are unknown, so
    every sliced dimension is."""
    if key.count(Ellipsis) > 1:
        raise ShapeError("Multiple ellipses in slice spec not allowed")
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consumed > len(dims):
        raise ShapeError(f"Index out of range using input dim {len(dims)}")
    if Ellipsis not in key:
        key = (*key, Ellipsis)
    out: list[Dim] = []
    d = 0
    for k in key:
        if k is Ellipsis:
            rest = len(dims) - consumed
            out.extend(dims[d : d + rest])
            d += rest
        elif k is None:
            out.append(1)
        elif isinstance(k, builtins.slice):
            size = dims[d]
            if k.step == 0:
                raise ShapeError("strides[i] must be non-zero")
            exact = known and size is not None
            out.append(len(range(*k.indices(size))) if exact else None)  # type: ignore[arg-type]
            d += 1
        else:
            size = dims[d]
            if k is not UNKNOWN and size is not None and not -size <= k < size:
                raise ShapeError(f"slice index {k} of dimension {d} out of bounds (size {size})")
            d += 1
    return out


def _infer_strided_slice(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    x, *vectors = inputs
    for tensor, what in zip(vectors, ("begin", "end", "strides")):
        check_shape_tensor(tensor, what)
    values = [constant_value(t) for t in vectors]
    count = next((len(host_ints(v)) for v in values if v is not None), None)
    if x.shape.dims is None or count is None:
        return single(TensorShape(None), x.dtype)
    known = all(v is not None for v in values)
    begin, end, strides = (host_ints(v) if v is not None else [None] * count for v in values)
    key = index_key(begin, end, strides, attrs)
    return single(TensorShape(_sliced_shape(x.shape.dims, key, known)), x.dtype)


def _strided_slice_kernel(xp: Any, op: Operation, state: Any) -> Any:
    masks = dict(op.attrs)
    key_of = run_derived(lambda b, e, s: index_key(b, e, s, masks))
    return lambda x, begin, end, strides: x[(*key_of(begin, end, strides),)]


registry.register(
    OpDef(
        type="StridedSlice",
        infer=_infer_strided_slice,
        kernel=_strided_slice_kernel,
        cost=memory_cost,
    )
)


# -- StridedSliceGrad: the gradient scattered back into zeros of the input's shape --------------
def _infer_strided_slice_grad(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    shape, *_, dy = inputs
    check_shape_tensor(shape, "shape")
    return single(shape_from_tensor(shape), dy.dtype)


def _strided_slice_grad_kernel(xp: Any, op: Operation, state: Any) -> Any:
    masks = dict(op.attrs)
    key_of = run_derived(lambda shape, b, e, s: (shape, index_key(b, e, s, masks)))
    dtype = op.outputs[0].dtype.np

    def scatter(shape: Any, begin: Any, end: Any, strides: Any, dy: Any) -> Any:
        dims, key = key_of(shape, begin, end, strides)
        out = xp.zeros(dims, dtype=dtype)
        out[(*key,)] = dy
        return out

    return scatter


registry.register(
    OpDef(
        type="StridedSliceGrad",
        infer=_infer_strided_slice_grad,
        kernel=_strided_slice_grad_kernel,
        cost=memory_cost,
    )
)


def strided_slice_grad(
    shape: Tensor, begin: Tensor, end: Tensor, strides: Tensor, dy: Tensor,
    masks: Mapping[str, int],
) -> Tensor:  # fmt: skip
    """TF's ``strided_slice_grad``: Python or NumPy values become its ``StridedSliceGrad/
    <arg>`` Consts."""
    with op_scope("StridedSliceGrad", (dy,)) as scope:
        args = [
            t if is_tensor_like(t) else constant_op.constant(t, dtypes.int32, name=arg)
            for t, arg in ((shape, "shape"), (begin, "begin"), (end, "end"), (strides, "strides"))
        ]
        return make_op("StridedSliceGrad", [*args, dy], scope, dict(masks)).outputs[0]


# -- t[...] ---------------------------------------------------------------------------------------
def getitem(tensor: Tensor, spec: Any) -> Tensor:
    """TF's ``_slice_helper``: ``t[1]``, ``t[:, 1:3]``, ``t[..., ::-1]``, ``t[None, i]``."""
    entries = spec if isinstance(spec, builtins.tuple) else (spec,)
    begin: list[Any] = []
    end: list[Any] = []
    strides: list[Any] = []
    masks = dict.fromkeys(MASKS, 0)
    for index, entry in enumerate(entries):
        bit = 1 << index
        if isinstance(entry, builtins.slice):
            begin.append(0 if entry.start is None else entry.start)
            end.append(0 if entry.stop is None else entry.stop)
            strides.append(1 if entry.step is None else entry.step)
            masks["begin_mask"] |= bit if entry.start is None else 0
            masks["end_mask"] |= bit if entry.stop is None else 0
        elif entry is Ellipsis or entry is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if entry is Ellipsis else "new_axis_mask"] |= bit
        else:
            _check_index(entry)
            begin.append(entry)
            end.append(entry + 1)
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    tensor = convert_to_tensor(tensor)
    with op_scope("strided_slice", (tensor,)) as scope:
        if begin:
            vectors = [array_ops.stack(v) for v in (begin, end, strides)]
        else:
            empty = constant_op.constant([], dtypes.int32)
            vectors = [empty] * 3
        return make_op("StridedSlice", [tensor, *vectors], scope, masks).outputs[0]


def _check_index(entry: Any) -> None:
    """An index is an int or a scalar int tensor (TF's ``_check_index``)."""
    if isinstance(entry, int) and not isinstance(entry, bool):
        return
    if is_tensor_like(entry) and entry.dtype.base_dtype in (dtypes.int32, dtypes.int64):
        return
    raise TypeError(
        "Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
        f"tf.int32/tf.int64 tensors are valid indices, got {entry!r}"
    )
