"""Run-time shape ops: int32 tensors that hold shapes, and the ops that consume them.

Gradients often need the shapes of a run's values: a ``placeholder(float32)`` has no static
shape, so reducing a broadcast gradient needs the shapes the run actually feeds. These are
TensorFlow's ops for that (``Shape``, ``Size``, ``BroadcastGradientArgs``, ``BroadcastTo``,
``ConcatOffset``; ``ReducedShape`` is one op where TF builds ``reduced_shape`` from several),
builders for the tensor-argument forms of ``Reshape``, ``Fill``, ``Slice`` and the reductions,
and what every op with shape-like inputs shares: their values as far as construction knows
them (``constant_value``), TF's Const for a list given (``int_const``) and their ints read once
per array at run time (``run_ints``, ``run_derived``).

Shape-valued tensors are int32 and have kernels on every device type, as in TF (where GPU
kernels keep them in host memory), so a gradient colocated with a GPU op can be placed there.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import constant_op
from placeviz.graph.ops._build import make_op, op_scope, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.registry import OpDef, OutputSpec, free_cost
from placeviz.graph.shapes import ShapeError, TensorShape, broadcast

INDEX_DTYPES = (dtypes.int32, dtypes.int64)
T = TypeVar("T")


# -- what graph construction already knows about a shape-valued tensor -------------------------
# Small ops whose value construction computes from constant inputs, as TF's shape inference
# evaluates the constant subgraph behind a shape-like input (``Reshape`` to a stacked,
# transposed shape in Tile's gradient; a ``Range`` of a cast bound).
_FOLDED = frozenset(
    {
        "Pack",
        "Transpose",
        "Reshape",
        "Range",
        "ConcatV2",
        "Cast",
        "Sub",
        "InvertPermutation",
        "Slice",
        "StridedSlice",
        "Fill",
        "AddV2",
        "BroadcastGradientArgs",
    }
)
_FOLDED_ELEMENTS = 1024


def constant_value(tensor: Tensor) -> np.ndarray | None:
    """The tensor's value when construction already knows it (TF's ``constant_value``)."""
    op = tensor.op
    if op.type == "Const":
        return op.attrs["value"]
    if op.type in _FOLDED:
        count = tensor.shape.num_elements()
        if count is not None and count > _FOLDED_ELEMENTS:
            return None
        inputs = [constant_value(t) for t in op.inputs]
        if any(v is None for v in inputs):
            return None
        value = op.op_def.kernel_for("numpy")(np, op, None)(*inputs)
        value = np.asarray(value[tensor.value_index] if op.op_def.multi_output else value)
        return value if value.size <= _FOLDED_ELEMENTS else None
    if op.type == "Shape" and op.inputs[0].shape.is_fully_defined:
        return np.array(op.inputs[0].shape.as_list(), dtype=tensor.dtype.np)
    if op.type == "Size" and op.inputs[0].shape.is_fully_defined:
        return np.array(op.inputs[0].shape.num_elements(), dtype=tensor.dtype.np)
    return None


def shape_from_tensor(tensor: Tensor) -> TensorShape:
    """The static shape a 1-D int tensor describes, as far as construction knows it (TF's
    ``constant_value_as_shape``): a -1 entry is an unknown dimension."""
    if tensor.op.type == "Shape":
        return tensor.op.inputs[0].shape
    value = constant_value(tensor)
    if value is not None:
        return TensorShape(int(d) for d in value.reshape(-1))
    length = tensor.shape[0] if tensor.shape.ndims == 1 else None
    return TensorShape(None if length is None else [None] * length)


def check_shape_tensor(tensor: Tensor, what: str, rank: int = 1) -> None:
    """A shape, axes or sizes argument must be an int32/int64 tensor of the given rank."""
    if tensor.dtype not in INDEX_DTYPES:
        raise TypeError(f"{what} must be int32 or int64, not {tensor.dtype.name}")
    if tensor.shape.ndims is not None and tensor.shape.ndims != rank:
        raise ShapeError(f"{what} must have rank {rank}, but has shape {tensor.shape}")


def host_ints(value: Any) -> tuple[int, ...]:
    """A shape-valued array (NumPy or CuPy) as Python ints, which every array call accepts."""
    return tuple(int(v) for v in value.reshape(-1).tolist())


def run_derived(derive: Callable[..., T]) -> Callable[..., T]:
    """``derive`` of shape-like kernel inputs' ints (``host_ints`` of each), computed again only
    when a run brings other arrays: a Const input is the plan's same array on every run (a fed
    one is new; the plan reuses buffers only for ufuncs' inputs), so the per-run cost of a
    reshape's shape, a slice's bounds or a split's sizes is an identity check per input."""
    last: list[Any] = [(), None]

    def derived(*arrays: Any) -> T:
        seen = last[0]
        if len(seen) != len(arrays) or not all(map(operator.is_, arrays, seen)):
            last[0], last[1] = arrays, derive(*(host_ints(a) for a in arrays))
        return last[1]

    return derived


def run_ints() -> Callable[[Any], tuple[int, ...]]:
    """``host_ints`` of one shape-like kernel input, converted once per array (``run_derived``
    for one input, which kernels call most)."""
    last: list[Any] = [None, ()]

    def ints(value: Any) -> tuple[int, ...]:
        if value is not last[0]:
            last[0], last[1] = value, host_ints(value)
        return last[1]

    return ints


def run_axis() -> Callable[[Any], int]:
    """The int of a scalar axis input (a concat's axis, a split's split_dim), once per array."""
    last: list[Any] = [None, 0]

    def axis(value: Any) -> int:
        if value is not last[0]:
            last[0], last[1] = value, int(value)
        return last[1]

    return axis


def int_const(ints: Sequence[int], arg: str, typed_by_default: bool = True) -> Tensor:
    """The int32 Const named ``arg`` that TF's op helper makes of a shape-like list given to an
    op (``Reshape/shape``), inside the op's scope. An empty list has no element to tell its
    type: TF first makes a float32 Const of it, which an argument whose type has a default
    (Reshape's shape, Tile's multiples, a reduction's axes, a Transpose's perm) leaves unused
    beside an int32 ``<arg>_1``, and one without (Slice's begin and size) rejects."""
    if not ints:
        constant_op.constant([], dtypes.float32, name=arg)
        if not typed_by_default:
            raise TypeError(
                f"Value passed to parameter '{arg}' has DataType float32 not in list of allowed "
                "values: int32, int64"
            )
    return constant_op.constant(list(ints), dtypes.int32, name=arg)


# -- Shape, Size -------------------------------------------------------------------------------
def _infer_shape(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    rank = inputs[0].shape.ndims
    return single(TensorShape([rank]), attrs["out_type"])


def _shape_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np
    return lambda x: xp.asarray(x.shape, dtype=dtype)


def _infer_size(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    return single(TensorShape([]), attrs["out_type"])


def _size_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np
    return lambda x: xp.asarray(x.size, dtype=dtype)


def _infer_rank(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    return single(TensorShape([]), dtypes.int32)


def _rank_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda x: xp.asarray(x.ndim, dtype=xp.int32)


registry.register(OpDef(type="Shape", infer=_infer_shape, kernel=_shape_kernel, cost=free_cost))
registry.register(OpDef(type="Size", infer=_infer_size, kernel=_size_kernel, cost=free_cost))
registry.register(OpDef(type="Rank", infer=_infer_rank, kernel=_rank_kernel, cost=free_cost))


def _metadata(
    op_type: str, input: Any, name: str | None, attrs: dict[str, Any], static: Any, optimize: bool
) -> Tensor:
    """TF's ``shape_internal`` and friends: with ``optimize``, a value construction already knows
    becomes a Const of the op's name (``pv.shape`` of a [2, 3] tensor is the Const ``Shape``)."""
    with op_scope(name or op_type, (input,)) as scope:
        tensor = convert_to_tensor(input)
        value = static(tensor.shape) if optimize else None
        if value is not None:
            dtype = attrs.get("out_type", dtypes.int32)
            return constant_op.constant(value, dtype=dtype, name=scope)
        return make_op(op_type, [tensor], scope, attrs).outputs[0]


def shape(
    input: Any, name: str | None = None, out_type: Any = dtypes.int32, optimize: bool = False
) -> Tensor:
    """The shape of ``input`` as a 1-D int tensor; a run-time op unless ``optimize`` folds it."""
    return _metadata(
        "Shape",
        input,
        name,
        {"out_type": dtypes.as_dtype(out_type)},
        lambda s: s.as_list() if s.is_fully_defined else None,
        optimize,
    )


def size(
    input: Any, name: str | None = None, out_type: Any = dtypes.int32, optimize: bool = False
) -> Tensor:
    """The number of elements of ``input`` as an int scalar (``optimize`` as for ``shape``)."""
    return _metadata(
        "Size",
        input,
        name,
        {"out_type": dtypes.as_dtype(out_type)},
        lambda s: s.num_elements(),
        optimize,
    )


def rank(input: Any, name: str | None = None, optimize: bool = False) -> Tensor:
    """The number of dimensions of ``input`` as an int32 scalar (TF's Rank has no out_type)."""
    return _metadata("Rank", input, name, {}, lambda s: s.ndims, optimize)


# -- BroadcastGradientArgs ---------------------------------------------------------------------
def broadcast_gradient_axes(
    s0: Sequence[int], s1: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The axes of the broadcast result each operand's gradient is summed over.

    An operand is reduced over the dimensions broadcasting prepended to it and over those where
    it has size 1 and the other operand does not (a reshape to its shape handles the rest).
    """
    n = max(len(s0), len(s1))
    p0 = (1,) * (n - len(s0)) + tuple(s0)
    p1 = (1,) * (n - len(s1)) + tuple(s1)
    r0: list[int] = []
    r1: list[int] = []
    for i, (a, b) in enumerate(zip(p0, p1)):
        if a != b and a != 1 and b != 1:
            raise ValueError(f"Incompatible shapes: {list(s0)} vs. {list(s1)}")
        if i < n - len(s0) or (a == 1 and b != 1):
            r0.append(i)
        if i < n - len(s1) or (b == 1 and a != 1):
            r1.append(i)
    return tuple(r0), tuple(r1)


def _infer_bcast_args(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    for i, tensor in enumerate(inputs):
        check_shape_tensor(tensor, f"s{i}")
    dtype = inputs[0].dtype
    return [(TensorShape([None]), dtype), (TensorShape([None]), dtype)]


def _bcast_args_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np

    def args(s0: Any, s1: Any) -> tuple[Any, Any]:
        try:
            r0, r1 = broadcast_gradient_axes(host_ints(s0), host_ints(s1))
        except ValueError as exc:
            raise InvalidArgumentError(str(exc), op=op) from None
        return xp.asarray(r0, dtype=dtype), xp.asarray(r1, dtype=dtype)

    return args


registry.register(
    OpDef(
        type="BroadcastGradientArgs",
        infer=_infer_bcast_args,
        kernel=_bcast_args_kernel,
        cost=free_cost,
        multi_output=True,
    )
)


def broadcast_gradient_args(s0: Tensor, s1: Tensor, name: str | None = None) -> list[Tensor]:
    """Run-time ``broadcast_gradient_axes`` of two shape tensors: ``[r0, r1]``."""
    return list(make_op("BroadcastGradientArgs", [s0, s1], name or "BroadcastGradientArgs").outputs)


# -- BroadcastTo -------------------------------------------------------------------------------
def _infer_broadcast_to(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x, target_tensor = inputs
    check_shape_tensor(target_tensor, "shape")
    target = shape_from_tensor(target_tensor)
    if target.dims is not None and x.shape.dims is not None:
        if x.shape.ndims > target.ndims:  # type: ignore[operator]
            raise ShapeError(f"Rank of input ({x.shape.ndims}) must be no greater than rank of "
                             f"output shape ({target.ndims})")  # fmt: skip
        target = target.merge_with(broadcast(x.shape, target))
    return single(target, x.dtype)


def _broadcast_to_kernel(xp: Any, op: Operation, state: Any) -> Any:
    # A copy, not NumPy's read-only view: later kernels may write into their inputs' results.
    return lambda x, dims: xp.broadcast_to(x, host_ints(dims)).copy()


registry.register(OpDef(type="BroadcastTo", infer=_infer_broadcast_to, kernel=_broadcast_to_kernel))


def broadcast_to(input: Tensor, shape: Tensor, name: str | None = None) -> Tensor:
    """``input`` broadcast to the shape a 1-D int tensor holds."""
    return make_op("BroadcastTo", [input, shape], name or "BroadcastTo").outputs[0]


# -- ConcatOffset ------------------------------------------------------------------------------
def _infer_concat_offset(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    concat_dim, *shapes = inputs
    check_shape_tensor(concat_dim, "concat_dim", rank=0)
    if len(shapes) < 2:
        raise ShapeError(f"ConcatOffset needs at least 2 shapes, got {len(shapes)}")
    for i, tensor in enumerate(shapes):
        check_shape_tensor(tensor, f"shape[{i}]")
    return [(tensor.shape, tensor.dtype) for tensor in shapes]


def _offsets(concat_dim: tuple[int, ...], *dims: tuple[int, ...]) -> list[list[int]]:
    rank = len(dims[0])
    along = concat_dim[0] % rank if rank else 0
    out, start = [], 0
    for d in dims:
        offset = [0] * rank
        offset[along] = start
        start += d[along]
        out.append(offset)
    return out


def _concat_offset_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np
    offsets_of = run_derived(_offsets)
    return lambda *inputs: tuple(xp.asarray(o, dtype=dtype) for o in offsets_of(*inputs))


registry.register(
    OpDef(
        type="ConcatOffset",
        infer=_infer_concat_offset,
        kernel=_concat_offset_kernel,
        cost=free_cost,
        multi_output=True,
    )
)


def concat_offset(
    concat_dim: Tensor, shapes: Sequence[Tensor], name: str | None = None
) -> list[Tensor]:
    """Where each of ``shapes`` starts in their concatenation along ``concat_dim`` (TF's
    inputs: the dimension, then the shapes)."""
    inputs = [concat_dim, *shapes]
    return list(make_op("ConcatOffset", inputs, name or "ConcatOffset").outputs)


# -- ReducedShape ------------------------------------------------------------------------------
def _infer_reduced_shape(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    check_shape_tensor(inputs[0], "input_shape")
    return single(inputs[0].shape, inputs[0].dtype)


def _reduced_shape_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axes = op.attrs["axis"]
    dtype = op.outputs[0].dtype.np

    def reduced(input_shape: Any) -> Any:
        dims = list(host_ints(input_shape))
        rank = len(dims)
        for axis in axes:
            if not -rank <= axis < rank:
                raise InvalidArgumentError(
                    f"axis {axis} is out of range for a tensor of rank {rank}", op=op
                )
            dims[axis % rank] = 1
        return xp.asarray(dims, dtype=dtype)

    return reduced


registry.register(
    OpDef(
        type="ReducedShape", infer=_infer_reduced_shape, kernel=_reduced_shape_kernel,
        cost=free_cost,
    )
)  # fmt: skip


def reduced_shape(input_shape: Tensor, axis: Sequence[int], name: str | None = None) -> Tensor:
    """The shape a keepdims reduction over ``axis`` leaves of an input shaped ``input_shape``
    (TF's ``math_ops.reduced_shape``, as one op): for gradients over inputs of unknown rank."""
    attrs = {"axis": tuple(operator.index(a) for a in axis)}
    return make_op("ReducedShape", [input_shape], name or "ReducedShape", attrs).outputs[0]


# -- tensor-argument forms of Reshape, Fill, Slice and the reductions --------------------------
def reshape(tensor: Tensor, shape: Tensor, name: str | None = None) -> Tensor:
    """``Reshape`` to the shape a 1-D int tensor holds at run time."""
    return make_op("Reshape", [tensor, shape], name or "Reshape").outputs[0]


def fill(dims: Tensor, value: Tensor, name: str | None = None) -> Tensor:
    """``Fill`` with TF's inputs ``(dims, value)``: the dims are a run-time tensor."""
    return make_op("Fill", [dims, value], name or "Fill").outputs[0]


def slice(input_: Tensor, begin: Tensor, size: Tensor, name: str | None = None) -> Tensor:
    """``Slice`` whose begin and size are run-time 1-D int tensors."""
    return make_op("Slice", [input_, begin, size], name or "Slice").outputs[0]


def reduce_sum(
    input_tensor: Tensor, axes: Tensor, keepdims: bool = False, name: str | None = None
) -> Tensor:
    """``Sum`` over axes a 1-D int tensor holds at run time (possibly none of them)."""
    attrs = {"keepdims": bool(keepdims)}
    return make_op("Sum", [input_tensor, axes], name or "Sum", attrs).outputs[0]
