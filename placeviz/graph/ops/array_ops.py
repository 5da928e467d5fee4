"""Fills, reshapes, joins, splits, slices, pads, gathers and casts: TensorFlow's array_ops.

As in TensorFlow, shapes, axes, permutations, bounds and sizes are int32 inputs: Consts TF's op
helper names after the argument (``Reshape/shape``, ``concat/axis``, ``split/split_dim``,
``Slice/begin``), or tensors. Kernels read them when the op runs, converting each array once
(``shape_ops.run_derived``); shape rules read their values where construction knows them
(``constant_value``), and attrs keep the static axes that gradients need.
"""

from __future__ import annotations

import builtins
import functools
import itertools
import math
import numbers
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import (
    Operation,
    Tensor,
    as_graph_element,
    get_default_graph,
    is_tensor_like,
)
from placeviz.graph.ops import constant_op, shape_ops, state_ops
from placeviz.graph.ops._build import make_op, op_scope, same_dtype, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.shape_ops import (
    INDEX_DTYPES,
    check_shape_tensor,
    constant_value,
    host_ints,
    int_const,
    run_axis,
    run_derived,
    run_ints,
    shape_from_tensor,
)
from placeviz.graph.registry import Cost, OpDef, OutputSpec, free_cost, memory_cost
from placeviz.graph.shapes import Dim, ShapeError, TensorShape, format_dims, normalize_axis

Shapes = Sequence[tuple[int, ...]]


# -- shared helpers ----------------------------------------------------------------------------
def _has_tensor(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return any(_has_tensor(v) for v in value)
    return is_tensor_like(value)


def _ints(value: Any, what: str) -> tuple[int, ...]:
    """Attrs must be static: Python ints, a NumPy vector or a fully known TensorShape."""
    if isinstance(value, TensorShape):
        if not value.is_fully_defined:
            raise ValueError(f"{what} must be fully defined, got {value}")
        return tuple(value.as_list())  # type: ignore[arg-type]
    if is_tensor_like(value):
        raise TypeError(f"{what} must be Python ints, not a tensor ({value!r})")
    items = value if isinstance(value, list | tuple | np.ndarray) else [value]
    try:
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise TypeError(f"{what} must be an int or a list of ints, got {value!r}") from None


def static_dims(shape: Any, what: str = "shape") -> tuple[int, ...]:
    """A fully known shape, as ops that create values from nothing (fills, RNGs) need."""
    dims = _ints(shape, what)
    if any(d < 0 for d in dims):
        raise ValueError(f"{what} dimensions must be non-negative, got {list(dims)}")
    return dims


def _output_rank(op: Operation) -> int | None:
    return op.outputs[0].shape.ndims


def _input_rank(op: Operation) -> int | None:
    return op.inputs[0].shape.ndims


def _count(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


def write_only_cost(
    op: Operation, in_shapes: Shapes, out_shapes: Shapes, flops_per_element: float = 0.0
) -> Cost:
    """Ops that make values from a shape (fills, RNGs) read no input data, they only write."""
    out = sum(_count(s) for s in out_shapes)
    return Cost(flops_per_element * out, float(out * registry.itemsize(op)))


def _copy_out_cost(op: Operation, in_shapes: Shapes, out_shapes: Shapes) -> Cost:
    """Slices and gathers read only the elements they copy out (plus their int inputs: the
    indices, a slice's bounds, an axis)."""
    out = sum(_count(s) for s in out_shapes)
    index_bytes = sum(
        _count(s) * t.dtype.size for s, t in zip(in_shapes[1:], op.inputs[1:], strict=True)
    )
    return Cost(0.0, float(2 * out * registry.itemsize(op) + index_bytes))


def _convert_all(values: Sequence[Any], what: str, arg: str | None = None) -> list[Tensor]:
    """Python values next to tensors take the first tensor's dtype and graph, as in TF; with
    ``arg`` (in the op's scope) the i-th is a Const named ``<arg>_<i>`` (``concat/values_1``)."""
    if not values:
        raise ValueError(f"{what} needs at least one value")

    def name(i: int) -> str | None:
        return None if arg is None else f"{arg}_{i}"

    first = next((v for v in values if is_tensor_like(v)), None)
    if first is None:
        return [convert_to_tensor(v, name=name(i)) for i, v in enumerate(values)]
    first_tensor = convert_to_tensor(first)
    with first_tensor.graph.as_default():
        return [
            convert_to_tensor(v)
            if is_tensor_like(v)
            else convert_to_tensor(v, first_tensor.dtype, name=name(i))
            for i, v in enumerate(values)
        ]


# -- zeros, ones, Fill, ZerosLike, OnesLike ----------------------------------------------------
# TF's ``_constant_if_small``: zeros and ones of fewer elements are a Const; larger ones a Fill,
# so a graph holding a big tensor costs no memory until a run computes it.
_SMALL_CONSTANT_ELEMENTS = 1000
_INT32_MAX = 2**31 - 1


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    return _filled(shape, 0, dtypes.as_dtype(dtype), name or "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Tensor:
    return _filled(shape, 1, dtypes.as_dtype(dtype), name or "ones")


def _filled(shape: Any, value: int, dtype: dtypes.DType, name: str) -> Tensor:
    graph = get_default_graph()
    if is_tensor_like(shape):  # a shape computed in the graph (an RNN's zero state): a Fill
        with graph.name_scope(name) as scope:
            return _fill_shape(convert_to_tensor(shape), value, dtype, scope)
    dims = static_dims(shape)
    with graph.name_scope(name) as scope:
        if _count(dims) < _SMALL_CONSTANT_ELEMENTS:
            return constant_op.constant(value, dtype, dims, name=scope)
        shape_tensor = constant_op.constant(dims, _shape_dtype(dims), name="shape_as_tensor")
        return _fill_shape(shape_tensor, value, dtype, scope)


def _shape_dtype(dims: tuple[int, ...]) -> dtypes.DType:
    """int32, or int64 where a dimension does not fit (TF's shape-to-tensor conversion)."""
    return dtypes.int64 if any(d > _INT32_MAX for d in dims) else dtypes.int32


def _infer_fill(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    """TF's inputs ``(dims, value)``; the dims are known statically when they are a constant."""
    dims, value = inputs
    if value.shape.ndims not in (None, 0):
        raise ShapeError(f"value must be a scalar, but has shape {value.shape}")
    check_shape_tensor(dims, "dims")
    return single(shape_from_tensor(dims), value.dtype)


def _fill_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np
    return lambda dims, value: xp.full(host_ints(dims), value, dtype=dtype)


registry.register(OpDef(type="Fill", infer=_infer_fill, kernel=_fill_kernel, cost=write_only_cost))


def fill(dims: Any, value: Any, name: str | None = None) -> Tensor:
    """``value`` (a Python scalar or a scalar tensor) gives the dtype; ``dims`` may be a 1-D int
    tensor. Nothing is allocated until a run computes the fill."""
    graph = get_default_graph()
    with graph.name_scope(name or "Fill") as scope:
        if is_tensor_like(dims):
            dims_tensor = convert_to_tensor(dims)
        else:
            shape = static_dims(dims, "dims")
            dims_tensor = constant_op.constant(shape, _shape_dtype(shape), name="dims")
        value_tensor = convert_to_tensor(value, name="value")
        return shape_ops.fill(dims_tensor, value_tensor, name=scope)


def _infer_zeros_like(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    return single(inputs[0].shape, attrs["dtype"])


def _zeros_like_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np
    return lambda x: xp.zeros(x.shape, dtype=dtype)


registry.register(
    OpDef(
        type="ZerosLike", infer=_infer_zeros_like, kernel=_zeros_like_kernel, cost=write_only_cost
    )
)


def zeros_like(
    tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True
) -> Tensor:
    """TF's ``zeros_like``: with ``optimize`` a fully known shape makes plain ``zeros`` (a Const
    named ``zeros_like``, or a Fill when large); another dtype fills the run's ``Shape``; else
    a ``ZerosLike`` op takes the shape at run time."""
    with op_scope(name or "zeros_like", (tensor,)) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        target = x.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype)
        if optimize and x.shape.is_fully_defined:
            return _filled(x.shape, 0, target, scope)
        if target is not x.dtype.base_dtype:
            return _fill_shape(shape_ops.shape(x), 0, target, scope)
        return make_op("ZerosLike", [x], scope, {"dtype": target}).outputs[0]


def ones_like(
    tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True
) -> Tensor:
    """TF's ``ones_like``: a Fill of ``tensor``'s shape, a ``<name>/Shape/shape_as_tensor``
    Const when ``optimize`` finds it fully known, else a ``Shape`` op (there is no OnesLike)."""
    with op_scope(name or "ones_like", (tensor,)) as scope:
        x = convert_to_tensor(tensor, name="tensor")
        target = x.dtype.base_dtype if dtype is None else dtypes.as_dtype(dtype)
        if optimize and x.shape.is_fully_defined:
            dims = static_dims(x.shape)
            with x.graph.name_scope("Shape"):
                shape = constant_op.constant(dims, _shape_dtype(dims), name="shape_as_tensor")
        else:
            shape = shape_ops.shape(x)
        return _fill_shape(shape, 1, target, scope)


def _fill_shape(shape: Tensor, value: int, dtype: dtypes.DType, scope: str) -> Tensor:
    """TF's ``zeros``/``ones`` of a shape tensor: ``<scope>Const`` filled as the scope's op."""
    return shape_ops.fill(shape, constant_op.constant(value, dtype, name="Const"), name=scope)


# -- Reshape -----------------------------------------------------------------------------------
def _infer_reshape(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    """The shape input's value where construction knows it (a Const), else what the shape
    tensor's own static shape tells."""
    x = inputs[0]
    if len(inputs) == 2:
        check_shape_tensor(inputs[1], "shape")
        value = constant_value(inputs[1])
        if value is None:
            target = shape_from_tensor(inputs[1])
            total, count = x.shape.num_elements(), target.num_elements()
            if total is not None and count is not None and total != count:
                raise ShapeError(
                    f"Cannot reshape a tensor with {total} elements to shape {target} "
                    f"({count} elements)"
                )
            return single(target, x.dtype)
        return _infer_reshape([x], {"shape": tuple(int(d) for d in value.reshape(-1))})
    shape: tuple[int, ...] = attrs["shape"]
    inferred = [i for i, d in enumerate(shape) if d == -1]
    if len(inferred) > 1:
        raise ShapeError(f"Only one input size may be -1, not both {inferred[0]} and {inferred[1]}")
    for i, d in enumerate(shape):
        if d < -1:
            raise ShapeError(f"Size {i} must be non-negative, not {d}")
    known = math.prod(d for d in shape if d != -1)
    total = x.shape.num_elements()
    out: list[Dim] = list(shape)
    if inferred:
        if total is None:
            out[inferred[0]] = None
        elif known == 0:
            raise ShapeError(
                "Reshape cannot infer the missing input size for an empty tensor unless all "
                "specified input sizes are non-zero"
            )
        elif total % known:
            raise ShapeError(f"Dimension size must be evenly divisible by {known} but is {total}")
        else:
            out[inferred[0]] = total // known
    elif total is not None and total != known:
        raise ShapeError(
            f"Cannot reshape a tensor with {total} elements to shape "
            f"[{','.join(map(str, shape))}] ({known} elements)"
        )
    return single(TensorShape(out), x.dtype)


def _reshape_kernel(xp: Any, op: Operation, state: Any) -> Any:
    ints = run_ints()

    def reshape(x: Any, shape: Any) -> Any:
        dims = ints(shape)
        try:
            return xp.reshape(x, dims)
        except ValueError:  # TF's words for a run's shape that does not fit
            known = math.prod(d for d in dims if d != -1)
            wanted = f"requires a multiple of {known}" if -1 in dims else f"has {known}"
            raise InvalidArgumentError(
                f"Input to reshape is a tensor with {x.size} values, but the requested shape "
                f"{wanted}",
                op=op,
            ) from None

    return reshape


registry.register(
    OpDef(
        type="Reshape",
        infer=_infer_reshape,
        kernel=_reshape_kernel,
        cost=free_cost,
        forwards_input=0,
    )
)


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Tensor:
    """One dimension of ``shape`` may be -1: it takes whatever size keeps the element count.

    As in TensorFlow the shape is the op's second input: a tensor, or an int32 ``Reshape/shape``
    Const made of the list given."""
    value = convert_to_tensor(tensor)
    with op_scope(name or "Reshape", (value,)) as scope:
        return make_op("Reshape", [value, _int_input(shape, "shape")], scope).outputs[0]


# -- Transpose ---------------------------------------------------------------------------------
def _infer_transpose(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x = inputs[0]
    perm: tuple[int, ...] | None = attrs["perm"]
    dims = x.shape.dims
    if perm is None:
        return single(TensorShape(None if dims is None else dims[::-1]), x.dtype)
    if sorted(perm) != list(range(len(perm))):
        raise ShapeError(f"perm {list(perm)} is not a permutation of 0..{len(perm) - 1}")
    if dims is None:
        return single(TensorShape([None] * len(perm)), x.dtype)
    if len(perm) != len(dims):
        raise ShapeError(f"perm has {len(perm)} entries, but the input has rank {len(dims)}")
    return single(TensorShape([dims[p] for p in perm]), x.dtype)


def _transpose_kernel(xp: Any, op: Operation, state: Any) -> Any:
    if len(op.inputs) == 2:  # the perm input, read when the op runs (a feed may replace it)
        ints = run_ints()
        return lambda x, perm: xp.transpose(x, ints(perm))
    return lambda x: xp.transpose(x)  # rank unknown when built: reversed


registry.register(
    OpDef(type="Transpose", infer=_infer_transpose, kernel=_transpose_kernel, cost=memory_cost)
)


def transpose(a: Any, perm: Any = None, name: str = "transpose") -> Tensor:
    """Without ``perm`` the dimensions are reversed (a matrix transpose for rank 2).

    As in TensorFlow the permutation is the op's second input, an int32 ``transpose/perm``
    Const; the ``perm`` attr keeps its value for shapes and gradients. Only an input of unknown
    rank transposed without ``perm`` has none (TensorFlow computes it with Rank and Range)."""
    value = convert_to_tensor(a)
    rank = value.shape.ndims
    if perm is None and rank is not None:
        perm = list(range(rank - 1, -1, -1))
    with op_scope(name, (value,)) as scope:
        if perm is None:
            return make_op("Transpose", [value], scope, {"perm": None}).outputs[0]
        if is_tensor_like(perm):  # a tensor whose value construction knows (gradients')
            perm_t = convert_to_tensor(perm)
            known = constant_value(perm_t)
            if known is None:
                raise TypeError(f"transpose needs a perm construction knows, not {perm!r}")
            order = host_ints(known)
        else:
            order = _ints(perm, "perm")
            perm_t = int_const(order, "perm")
        return make_op("Transpose", [value, perm_t], scope, {"perm": order}).outputs[0]


def _infer_invert_permutation(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list:
    check_shape_tensor(inputs[0], "x")
    return single(inputs[0].shape, inputs[0].dtype)


def _invert_permutation_kernel(xp: Any, op: Operation, state: Any) -> Any:
    return lambda x: xp.argsort(x).astype(x.dtype)


registry.register(
    OpDef(
        type="InvertPermutation",
        infer=_infer_invert_permutation,
        kernel=_invert_permutation_kernel,
        cost=free_cost,
    )
)


def invert_permutation(x: Tensor, name: str | None = None) -> Tensor:
    """TF's ``InvertPermutation``: y[x[i]] = i (the Transpose gradient's perm)."""
    return make_op("InvertPermutation", [x], name or "InvertPermutation").outputs[0]


# -- Squeeze, ExpandDims -----------------------------------------------------------------------
def _infer_squeeze(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x = inputs[0]
    dims = x.shape.dims
    if dims is None:
        return single(TensorShape(None), x.dtype)
    if attrs["axis"] is None:
        # An unknown dimension may or may not be 1, so even the rank is unknown (as in TF).
        if None in dims:
            return single(TensorShape(None), x.dtype)
        return single(TensorShape([d for d in dims if d != 1]), x.dtype)
    axes = {normalize_axis(a, len(dims)) for a in attrs["axis"]}
    for a in sorted(axes):
        if dims[a] not in (None, 1):
            raise ShapeError(f"Can not squeeze dim[{a}], expected a dimension of 1, got {dims[a]}")
    return single(TensorShape([d for i, d in enumerate(dims) if i not in axes]), x.dtype)


def _squeeze_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axis = op.attrs["axis"]
    if axis is not None:
        axis = tuple(normalize_axis(a, _input_rank(op)) for a in axis)
    return lambda x: xp.squeeze(x, axis=axis)


registry.register(
    OpDef(
        type="Squeeze",
        infer=_infer_squeeze,
        kernel=_squeeze_kernel,
        cost=free_cost,
        forwards_input=0,
    )
)


def squeeze(input: Any, axis: Any = None, name: str | None = None) -> Tensor:
    """Drops the named size-1 dimensions, or every size-1 dimension when ``axis`` is None."""
    attrs = {"axis": None if axis is None else _ints(axis, "axis")}
    return make_op("Squeeze", [convert_to_tensor(input)], name or "Squeeze", attrs).outputs[0]


def _infer_expand_dims(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x = inputs[0]
    dims = x.shape.dims
    if dims is None:
        return single(TensorShape(None), x.dtype)
    axis = normalize_axis(attrs["axis"], len(dims) + 1)
    return single(TensorShape([*dims[:axis], 1, *dims[axis:]]), x.dtype)


def _expand_dims_kernel(xp: Any, op: Operation, state: Any) -> Any:
    # the dim input, read when the op runs (a feed may replace it)
    return lambda x, dim: xp.expand_dims(x, normalize_axis(int(dim), x.ndim + 1))


registry.register(
    OpDef(
        type="ExpandDims",
        infer=_infer_expand_dims,
        kernel=_expand_dims_kernel,
        cost=free_cost,
        forwards_input=0,
    )
)


def expand_dims(input: Any, axis: int, name: str | None = None) -> Tensor:
    """``axis`` may be -rank-1..rank: the new size-1 dimension can go after the last one.

    As in TensorFlow the axis is the op's second input, an int32 ``ExpandDims/dim`` Const; the
    ``axis`` attr keeps its value for shapes."""
    value = convert_to_tensor(input)
    index = operator.index(axis)
    with op_scope(name or "ExpandDims", (value,)) as scope:
        dim = constant_op.constant(index, dtypes.int32, name="dim")
        return make_op("ExpandDims", [value, dim], scope, {"axis": index}).outputs[0]


# -- Pack (stack), Unpack (unstack) ------------------------------------------------------------
def _value_names(inputs: Sequence[Tensor]) -> list[str]:
    return [f"values[{i}]" for i in range(len(inputs))]


def _infer_pack(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    dtype = same_dtype("Pack", inputs, _value_names(inputs))
    shape = inputs[0].shape
    for i, tensor in enumerate(inputs[1:], start=1):
        if not shape.is_compatible_with(tensor.shape):
            raise ShapeError(
                f"Shapes of all inputs must match: values[0].shape = {inputs[0].shape} != "
                f"values[{i}].shape = {tensor.shape}"
            )
        shape = shape.merge_with(tensor.shape)
    if shape.dims is None:
        return single(TensorShape(None), dtype)
    axis = normalize_axis(attrs["axis"], len(shape.dims) + 1)
    dims = shape.dims
    return single(TensorShape([*dims[:axis], len(inputs), *dims[axis:]]), dtype)


def _pack_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axis = normalize_axis(op.attrs["axis"], _output_rank(op))
    return lambda *values: xp.stack(values, axis=axis)


registry.register(OpDef(type="Pack", infer=_infer_pack, kernel=_pack_kernel, cost=memory_cost))


def stack(values: Sequence[Any], axis: int = 0, name: str = "stack") -> Tensor:
    """Joins same-shaped values along a new axis; plain constants on axis 0 fold into one Const,
    as in TF."""
    if not isinstance(values, list | tuple):
        raise TypeError(f"stack takes a list or tuple of values, got {values!r}")
    if axis == 0 and values and not _has_tensor(values):
        return constant_op.constant(values, name=name)
    if axis != 0:
        tensors = _convert_all(values, "stack")
        return make_op("Pack", tensors, name, {"axis": operator.index(axis)}).outputs[0]
    # TF's autopacking: Python values beside tensors become Consts named by position (stack/1)
    with op_scope(name, values) as scope:
        first = convert_to_tensor(next(v for v in values if is_tensor_like(v)))
        tensors = [
            convert_to_tensor(v) if is_tensor_like(v) else convert_to_tensor(v, first.dtype, str(i))
            for i, v in enumerate(values)
        ]
        return make_op("Pack", tensors, scope, {"axis": 0}).outputs[0]


def _infer_unpack(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x = inputs[0]
    num = attrs["num"]
    dims = x.shape.dims
    if dims is None:
        return [(TensorShape(None), x.dtype)] * num
    axis = normalize_axis(attrs["axis"], len(dims))
    if dims[axis] is not None and dims[axis] != num:
        raise ShapeError(f"Dimension {axis} has size {dims[axis]}, but num={num}")
    return [(TensorShape([d for i, d in enumerate(dims) if i != axis]), x.dtype)] * num


def _unpack_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axis = normalize_axis(op.attrs["axis"], _input_rank(op))
    num = op.attrs["num"]
    whole = builtins.slice(None)
    # An Ellipsis in every index keeps 0-d pieces as arrays rather than NumPy scalars.
    if axis >= 0:
        keys = [(*[whole] * axis, i, Ellipsis) for i in range(num)]
    else:
        keys = [(Ellipsis, i, *[whole] * (-1 - axis)) for i in range(num)]
    return lambda x: tuple(x[key] for key in keys)


registry.register(
    OpDef(
        type="Unpack",
        multi_output=True,
        infer=_infer_unpack,
        kernel=_unpack_kernel,
        cost=memory_cost,
    )
)


def unstack(
    value: Any, num: int | None = None, axis: int = 0, name: str = "unstack"
) -> list[Tensor]:
    """``num`` defaults to the static size of ``axis``, which must then be known."""
    tensor = convert_to_tensor(value)
    axis = operator.index(axis)
    if num is None:
        dims = tensor.shape.dims
        if dims is None:
            raise ValueError(f"Cannot infer num from shape {tensor.shape}")
        if not -len(dims) <= axis < len(dims):
            raise ValueError(f"axis = {axis} not in [{-len(dims)}, {len(dims)})")
        num = dims[axis]
        if num is None:
            raise ValueError(f"Cannot infer num from shape {tensor.shape}")
    attrs = {"num": operator.index(num), "axis": axis}
    return list(make_op("Unpack", [tensor], name, attrs).outputs)


# -- ConcatV2 ----------------------------------------------------------------------------------
# As in TF the axis is ConcatV2's last input, an int32 ``concat/axis`` Const; the ``axis`` attr
# keeps its value for shapes and gradients.
def _infer_concat(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    values = inputs[:-1]
    dtype = same_dtype("ConcatV2", values, _value_names(values))
    known = [t for t in values if t.shape.dims is not None]
    if not known:
        return single(TensorShape(None), dtype)
    ranks = sorted({len(t.shape) for t in known})
    if len(ranks) > 1:
        raise ShapeError(f"Inputs to concat must all have the same rank, got ranks {ranks}")
    rank = ranks[0]
    if rank == 0:
        raise ShapeError("Can't concatenate scalars (use stack instead)")
    axis = normalize_axis(attrs["axis"], rank)
    out: list[Dim] = [None] * rank
    for tensor in known:
        dims = tensor.shape.dims or ()
        for i, d in enumerate(dims):
            if i == axis or d is None:
                continue
            if out[i] is not None and out[i] != d:
                # TF's words: the shapes without the axis, merged so far and this input's
                merged, this = ([x for j, x in enumerate(ds) if j != axis] for ds in (out, dims))
                at = i - (i > axis)
                raise ShapeError(
                    f"Dimension {at} in both shapes must be equal, but are {out[i]} and {d}. "
                    f"Shapes are {format_dims(merged)} and {format_dims(this)}."
                )
            out[i] = d
    sizes = [t.shape[axis] for t in values]
    out[axis] = None if None in sizes else sum(sizes)
    return single(TensorShape(out), dtype)


def _concat_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axis_of = run_axis()
    if len(op.inputs) == 3:  # the common case, without slicing the arguments
        return lambda a, b, axis: xp.concatenate((a, b), axis=axis_of(axis))
    return lambda *inputs: xp.concatenate(inputs[:-1], axis=axis_of(inputs[-1]))


registry.register(
    OpDef(type="ConcatV2", infer=_infer_concat, kernel=_concat_kernel, cost=memory_cost)
)


def concat(values: Any, axis: Any, name: str = "concat") -> Tensor:
    """TF's names: Python values become ``concat/values_<i>`` and an int axis ``concat/axis``
    (a constant scalar tensor is used as it is). One value needs no ConcatV2: TF returns an
    Identity of it instead (``concat/concat``, beside the ``concat/concat_dim`` Const it made
    of an int axis)."""
    items = values if isinstance(values, list | tuple) else [values]
    index = _static_axis(axis, "concat")
    if len(items) == 1:
        tensors = _convert_all(items, "concat")
        with op_scope(name, tensors):
            if not is_tensor_like(axis):
                constant_op.constant(index, dtypes.int32, name="concat_dim")
            return state_ops.identity(tensors[0], name=name)
    with op_scope(name, items) as scope:
        tensors = _convert_all(items, "concat", arg="values")
        if is_tensor_like(axis):
            axis_t = convert_to_tensor(axis)
        else:
            axis_t = constant_op.constant(index, dtypes.int32, name="axis")
        return make_op("ConcatV2", [*tensors, axis_t], scope, {"axis": index}).outputs[0]


def _static_axis(axis: Any, op: str) -> int:
    """An int, or a scalar int tensor whose value construction knows (a split's split_dim, as
    its gradient passes it): the attr shape rules and gradients read."""
    if not is_tensor_like(axis):
        return operator.index(axis)
    value = constant_value(convert_to_tensor(axis))
    if value is None or value.ndim:
        raise TypeError(f"{op}'s axis must be an int or a constant scalar tensor, not {axis!r}")
    return int(value)


# -- Split, SplitV -----------------------------------------------------------------------------
# As in TF the axis is an int32 ``split/split_dim`` input (Split's first, SplitV's last) and
# SplitV's sizes its second input; the ``axis`` and ``size_splits`` attrs keep their values for
# shapes and gradients.
def _infer_split(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x = inputs[1]
    num = attrs["num_split"]
    if num < 1:
        raise ShapeError(f"num_split must be at least 1, got {num}")
    dims = x.shape.dims
    if dims is None:
        return [(TensorShape(None), x.dtype)] * num
    axis = normalize_axis(attrs["axis"], len(dims))
    size = dims[axis]
    if size is not None and size % num:
        raise ShapeError(f"Dimension size must be evenly divisible by {num} but is {size}")
    piece = [*dims[:axis], None if size is None else size // num, *dims[axis + 1 :]]
    return [(TensorShape(piece), x.dtype)] * num


def _split_kernel(xp: Any, op: Operation, state: Any) -> Any:
    num = op.attrs["num_split"]
    axis_of = run_axis()
    return lambda split_dim, x: tuple(xp.split(x, num, axis=axis_of(split_dim)))


registry.register(
    OpDef(
        type="Split", multi_output=True, infer=_infer_split, kernel=_split_kernel, cost=memory_cost
    )
)


def _resolve_sizes(sizes: Sequence[int], dim: int) -> list[int]:
    """SplitV's sizes for a dimension of size ``dim``: a -1 takes whatever the others leave."""
    known = sum(s for s in sizes if s != -1)
    resolved = [dim - known if s == -1 else s for s in sizes]
    if sum(resolved) != dim or min(resolved) < 0:
        raise ShapeError(
            f"size_splits {list(sizes)} do not add up to the size {dim} of the split dimension"
        )
    return resolved


def _infer_split_v(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x = inputs[0]
    sizes: tuple[int, ...] = attrs["size_splits"]
    if not sizes:
        raise ShapeError("size_splits must name at least one size")
    if sizes.count(-1) > 1 or min(sizes) < -1:
        raise ShapeError(
            f"size_splits {list(sizes)} must be non-negative sizes, at most one of them -1"
        )
    dims = x.shape.dims
    if dims is None:
        return [(TensorShape(None), x.dtype)] * len(sizes)
    axis = normalize_axis(attrs["axis"], len(dims))
    dim = dims[axis]
    pieces: Sequence[Dim] = (
        [None if s == -1 else s for s in sizes] if dim is None else _resolve_sizes(sizes, dim)
    )
    return [(TensorShape([*dims[:axis], p, *dims[axis + 1 :]]), x.dtype) for p in pieces]


@functools.lru_cache(maxsize=256)
def _split_points(sizes: tuple[int, ...], dim: int) -> tuple[int, ...]:
    """Where ``xp.split`` cuts; cached, as every run repeats the same sizes and dimension."""
    return tuple(itertools.accumulate(_resolve_sizes(sizes, dim)))[:-1]


def _split_v_kernel(xp: Any, op: Operation, state: Any) -> Any:
    sizes_and_axis = run_derived(lambda sizes, split_dim: (sizes, split_dim[0]))

    def split_v(x: Any, size_splits: Any, split_dim: Any) -> tuple[Any, ...]:
        # The sizes must fit the value's dimension, which may have been unknown when the graph
        # was built: _split_points checks them, or xp.split would silently return a different
        # number of pieces.
        sizes, axis = sizes_and_axis(size_splits, split_dim)
        return tuple(xp.split(x, _split_points(sizes, x.shape[axis]), axis=axis))

    return split_v


registry.register(
    OpDef(
        type="SplitV",
        multi_output=True,
        infer=_infer_split_v,
        kernel=_split_v_kernel,
        cost=memory_cost,
    )
)


def split(
    value: Any,
    num_or_size_splits: Any,
    axis: Any = 0,
    num: int | None = None,
    name: str = "split",
) -> list[Tensor]:
    """An int makes that many equal pieces (Split); a list of sizes makes pieces that size
    (SplitV), one of which may be -1. TF's names: the sizes are an int32 Const made before the
    op's scope, the axis ``split/split_dim``, or the axis tensor given (an LSTM cell's)."""
    given_axis = axis
    axis = _static_axis(axis, "split")
    if isinstance(num_or_size_splits, numbers.Integral):
        with op_scope(name, (value,)) as scope:
            split_dim = _split_dim(given_axis, axis)
            tensor = convert_to_tensor(value, name="value")
            attrs: dict[str, Any] = {"num_split": int(num_or_size_splits), "axis": axis}
            return list(make_op("Split", [split_dim, tensor], scope, attrs).outputs)
    sizes = _ints(num_or_size_splits, "num_or_size_splits")
    if num is not None and num != len(sizes):
        raise ValueError(f"num={num} does not match the {len(sizes)} sizes in {list(sizes)}")
    graph = as_graph_element(value).graph if is_tensor_like(value) else get_default_graph()
    with graph.as_default():
        sizes_t = constant_op.constant(list(sizes), dtypes.int32)
    with op_scope(name, (value,)) as scope:
        tensor = convert_to_tensor(value, name="value")
        split_dim = _split_dim(given_axis, axis)
        attrs = {"size_splits": sizes, "axis": axis}
        return list(make_op("SplitV", [tensor, sizes_t, split_dim], scope, attrs).outputs)


def _split_dim(given: Any, axis: int) -> Tensor:
    """The axis input: the tensor given, else an int32 ``split_dim`` Const in the op's scope."""
    if is_tensor_like(given):
        return convert_to_tensor(given)
    return constant_op.constant(axis, dtypes.int32, name="split_dim")


# -- Slice -------------------------------------------------------------------------------------
# As in TF begin and size are the op's int inputs (``Slice/begin``, ``Slice/size`` Consts of the
# lists given, or run-time tensors in gradients); shapes use their values where construction
# knows them.
def _infer_slice(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x, begin_t, size_t = inputs
    check_shape_tensor(begin_t, "begin")
    check_shape_tensor(size_t, "size")
    begin_value, size_value = constant_value(begin_t), constant_value(size_t)
    if begin_value is None or size_value is None:
        out = shape_from_tensor(size_t)
        if out.dims is None and x.shape.dims is not None:
            out = TensorShape([None] * len(x.shape.dims))
        return single(out, x.dtype)
    begin, size = host_ints(begin_value), host_ints(size_value)
    dims = x.shape.dims
    if len(begin) != len(size) or (dims is not None and len(dims) != len(begin)):
        rank = "?" if dims is None else len(dims)
        raise ShapeError(
            f"Expected begin and size to have {rank} entries (the input's rank), but got "
            f"{len(begin)} and {len(size)}"
        )
    out: list[Dim] = []
    for i, (b, s) in enumerate(zip(begin, size, strict=True)):
        d = None if dims is None else dims[i]
        if b < 0 or (d is not None and b > d):
            raise ShapeError(f"Expected begin[{i}] in [0, {'?' if d is None else d}], but got {b}")
        if s < -1 or (d is not None and s != -1 and b + s > d):
            limit = "?" if d is None else d - b
            raise ShapeError(f"Expected size[{i}] in [0, {limit}], but got {s}")
        out.append(s if s != -1 else (None if d is None else d - b))
    return single(TensorShape(out), x.dtype)


def _slice_key(begin: Sequence[int], size: Sequence[int]) -> tuple[Any, ...]:
    bounds = zip(begin, size, strict=True)
    # The trailing Ellipsis keeps a 0-d result an array.
    return (*(builtins.slice(b, None if s == -1 else b + s) for b, s in bounds), Ellipsis)


def _slice_kernel(xp: Any, op: Operation, state: Any) -> Any:
    key_of = run_derived(_slice_key)
    return lambda x, begin, size: x[key_of(begin, size)]


registry.register(
    OpDef(type="Slice", infer=_infer_slice, kernel=_slice_kernel, cost=_copy_out_cost)
)


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Tensor:
    """``size[i] == -1`` takes everything from ``begin[i]`` to the end of dimension i."""
    with op_scope(name or "Slice", (input_, begin, size)) as scope:
        tensors = [
            convert_to_tensor(input_, name="input"),
            _int_input(begin, "begin", typed_by_default=False),
            _int_input(size, "size", typed_by_default=False),
        ]
        return make_op("Slice", tensors, scope).outputs[0]


def _int_input(value: Any, arg: str, typed_by_default: bool = True) -> Tensor:
    """A shape-like argument as its op's input: a tensor, or ``int_const`` of the ints given."""
    if is_tensor_like(value):
        return convert_to_tensor(value)
    if isinstance(value, list | tuple) and _has_tensor(value):  # TF's autopacking: a Pack
        return stack(list(value), name=arg)
    return int_const(_ints(value, arg), arg, typed_by_default)


# -- Tile --------------------------------------------------------------------------------------
def _infer_tile(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x, multiples_t = inputs
    check_shape_tensor(multiples_t, "multiples")
    value = constant_value(multiples_t)
    dims = x.shape.dims
    count = multiples_t.shape[0] if multiples_t.shape.ndims == 1 else None
    if dims is not None and count is not None and count != len(dims):
        raise ShapeError(
            f"Shape must be rank {len(dims)} but is rank {count}: multiples must have one entry "
            f"per dimension of the input, shape {x.shape}"
        )
    if value is None:  # TF's: what the multiples' shape tensor tells (a Shape op's input)
        partial = shape_from_tensor(multiples_t).dims
        rank = len(dims) if dims is not None else count
        if dims is None or partial is None or len(partial) != len(dims):
            return single(TensorShape(None if rank is None else [None] * rank), x.dtype)
        return single(TensorShape([_times(d, m) for d, m in zip(dims, partial)]), x.dtype)
    multiples = host_ints(value)
    if any(m < 0 for m in multiples):
        raise ShapeError(f"Expected multiples to be non-negative, got {list(multiples)}")
    if dims is None:
        return single(TensorShape([None] * len(multiples)), x.dtype)
    tiled = [None if d is None else d * m for d, m in zip(dims, multiples, strict=True)]
    return single(TensorShape(tiled), x.dtype)


def _times(dim: int | None, multiple: int | None) -> int | None:
    """TF's shape-inference product: a factor of 0 or 1 decides alone, else both must be known."""
    if dim in (0, 1):
        return 0 if dim == 0 else multiple
    if multiple in (0, 1):
        return 0 if multiple == 0 else dim
    return None if dim is None or multiple is None else dim * multiple


def _tile_kernel(xp: Any, op: Operation, state: Any) -> Any:
    ints = run_ints()
    return lambda x, multiples: xp.tile(x, ints(multiples))


registry.register(OpDef(type="Tile", infer=_infer_tile, kernel=_tile_kernel, cost=memory_cost))


def tile(input: Any, multiples: Any, name: str | None = None) -> Tensor:
    """Repeats ``input`` ``multiples[i]`` times along dimension i (``Tile/multiples``, an int32
    Const of the list given, is the op's second input as in TF)."""
    with op_scope(name or "Tile", (input, multiples)) as scope:
        tensors = [convert_to_tensor(input, name="input"), _int_input(multiples, "multiples")]
        return make_op("Tile", tensors, scope).outputs[0]


# -- Pad ---------------------------------------------------------------------------------------
def _infer_pad(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x, paddings = inputs
    check_shape_tensor(paddings, "paddings", rank=2)
    value = constant_value(paddings)
    dims = x.shape.dims
    if value is not None:
        if value.ndim != 2 or value.shape[1] != 2 or (dims is not None and len(dims) != len(value)):
            raise ShapeError(
                f"paddings must have shape [{'?' if dims is None else len(dims)}, 2], "
                f"got {list(value.shape)}"
            )
        if value.size and value.min() < 0:
            raise ShapeError(f"paddings must be non-negative, got {value.tolist()}")
        if dims is None:
            return single(TensorShape([None] * len(value)), x.dtype)
        padded = [None if d is None else d + int(a) + int(b) for d, (a, b) in zip(dims, value)]
        return single(TensorShape(padded), x.dtype)
    if dims is None:
        rank = paddings.shape[0]
        return single(TensorShape(None if rank is None else [None] * rank), x.dtype)
    return single(TensorShape([None] * len(dims)), x.dtype)


def _pad_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def pad(x: Any, paddings: Any) -> Any:
        pairs = host_ints(paddings)
        return xp.pad(x, [pairs[i : i + 2] for i in range(0, len(pairs), 2)])

    return pad


registry.register(OpDef(type="Pad", infer=_infer_pad, kernel=_pad_kernel, cost=memory_cost))


def pad(tensor: Any, paddings: Any, name: str | None = None) -> Tensor:
    """Zeros before and after each dimension: ``paddings[i] = [before, after]``, a list or an
    int tensor of shape [rank, 2] (constant mode only)."""
    x = convert_to_tensor(tensor)
    with x.graph.as_default():
        pads = convert_to_tensor(paddings, dtype=None if is_tensor_like(paddings) else dtypes.int32)
    return make_op("Pad", [x, pads], name or "Pad").outputs[0]


# -- GatherV2 ----------------------------------------------------------------------------------
# As in TF the axis is the op's third input, an int32 ``GatherV2/axis`` Const; the ``axis`` attr
# keeps its value for shapes and gradients.
def _infer_gather(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    params, indices, _ = inputs
    if indices.dtype not in INDEX_DTYPES:
        raise TypeError(
            f"Input 'indices' of 'GatherV2' Op has type {indices.dtype.name} that is not in the "
            "list of allowed values: int32, int64"
        )
    dims = params.shape.dims
    if dims is not None and not dims:
        raise ShapeError("params must be at least 1 dimensional")
    if dims is None or indices.shape.dims is None:
        return single(TensorShape(None), params.dtype)
    axis = normalize_axis(attrs["axis"], len(dims))
    return single(TensorShape([*dims[:axis], *indices.shape.dims, *dims[axis + 1 :]]), params.dtype)


def _gather_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axis_of = run_axis()

    checked: list[Any] = [None]

    def gather(params: Any, indices: Any, axis: Any) -> Any:
        along = axis_of(axis)
        if indices is not checked[0]:  # once per array, as run_derived
            if indices.size and indices.min() < 0:  # NumPy would count from the end; TF refuses
                _bad_index(indices, params.shape[along], op)
            checked[0] = indices
        try:
            return xp.take(params, indices, axis=along)
        except IndexError:
            _bad_index(indices, params.shape[along], op)

    return gather


def _bad_index(indices: Any, size: int, op: Operation) -> None:
    """TF's words for the first index outside [0, size): ``indices[1,0] = 7 is not in [0, 3)``."""
    host = np.asarray(indices.get() if hasattr(indices, "get") else indices)
    where = tuple(int(i) for i in np.argwhere((host < 0) | (host >= size))[0])
    raise InvalidArgumentError(
        f"indices[{','.join(map(str, where))}] = {host[where]} is not in [0, {size})", op=op
    )


registry.register(
    OpDef(type="GatherV2", infer=_infer_gather, kernel=_gather_kernel, cost=_copy_out_cost)
)


def gather(params: Any, indices: Any, axis: int = 0, name: str | None = None) -> Tensor:
    """Picks slices of ``params`` along ``axis``; a list of Python ints becomes int32 indices.
    TF's names: Python values become ``GatherV2/params`` and ``GatherV2/indices``, the axis
    ``GatherV2/axis``."""
    index = operator.index(axis)
    with op_scope(name or "GatherV2", (params, indices)) as scope:
        params_t = convert_to_tensor(params, name="params")
        indices_t = convert_to_tensor(indices, name="indices")
        axis_t = constant_op.constant(index, dtypes.int32, name="axis")
        attrs = {"axis": index}
        return make_op("GatherV2", [params_t, indices_t, axis_t], scope, attrs).outputs[0]


# -- Cast --------------------------------------------------------------------------------------
def _infer_cast(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    return single(inputs[0].shape, attrs["dtype"])


def _cast_kernel(xp: Any, op: Operation, state: Any) -> Any:
    dtype = op.outputs[0].dtype.np
    return lambda x: x.astype(dtype)


def _cast_cost(op: Operation, in_shapes: Shapes, out_shapes: Shapes) -> Cost:
    """Reads elements of the source dtype and writes elements of the target dtype."""
    n = _count(out_shapes[0])
    return Cost(float(n), float(n * (op.inputs[0].dtype.size + op.outputs[0].dtype.size)))


registry.register(OpDef(type="Cast", infer=_infer_cast, kernel=_cast_kernel, cost=_cast_cost))


def cast(x: Any, dtype: Any, name: str | None = None) -> Tensor:
    """A tensor that already has ``dtype`` is returned as it is, with no Cast op (as in TF);
    as TF's, the name scope ``Cast`` is taken either way, and a Python value is ``Cast/x``."""
    target = dtypes.as_dtype(dtype)
    with op_scope(name or "Cast", [x]) as scope:
        tensor = convert_to_tensor(x, name="x")
        if tensor.dtype is target:
            return tensor
        return make_op("Cast", [tensor], scope, {"dtype": target}).outputs[0]


# -- shape, size, rank -------------------------------------------------------------------------
def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    """TF1's ``tf.shape``: a Const named ``Shape`` when the static shape is known, else the op."""
    return shape_ops.shape(input, name=name, out_type=out_type, optimize=True)


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Tensor:
    """TF1's ``tf.size``: a Const named ``Size`` when the element count is known, else the op."""
    return shape_ops.size(input, name=name, out_type=out_type, optimize=True)


def rank(input: Any, name: str | None = None) -> Tensor:
    """TF1's ``tf.rank``: a Const named ``Rank`` when the rank is known, else the op."""
    return shape_ops.rank(input, name=name, optimize=True)
