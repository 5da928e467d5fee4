"""Ops that pick or count along an axis: ArgMax, ArgMin, OneHot, TopKV2, Cumsum and Where, and
ScatterNd (TopKV2's gradient scatters into zeros with it).

As in TensorFlow the axis, depth and k are int32 inputs (``ArgMax/dimension``, ``one_hot/depth``,
``TopKV2/k``, ``Cumsum/axis``); shape rules read their values where construction knows them and
raise TF's build-time errors, kernels check them again when the op runs (a fed value).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from placeviz import dtypes
from placeviz.errors import InvalidArgumentError
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, is_tensor_like
from placeviz.graph.ops import constant_op
from placeviz.graph.ops._build import (
    check_dtype,
    deprecated_argument,
    make_op,
    op_scope,
    same_dtype,
    single,
)
from placeviz.graph.ops.array_ops import _int_input
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.shape_ops import INDEX_DTYPES, constant_value, shape_from_tensor
from placeviz.graph.registry import Cost, OpDef, OutputSpec, memory_cost
from placeviz.graph.shapes import ShapeError, TensorShape

_NUMBERS = frozenset(dtypes.NUMBERS)
_NUMBER_KERNELS = {t: _NUMBERS for t in registry.DEVICE_TYPES}
_NUMBERS_AND_BOOL = (*dtypes.NUMBERS, dtypes.bool)


def _scalar_value(tensor: Tensor) -> int | None:
    value = constant_value(tensor)
    return None if value is None or value.size != 1 else int(value.reshape(-1)[0])


def _non_negative_size(tensor: Tensor) -> int | None:
    """TF's ``MakeDimForScalarInput``: a scalar size input known at construction is checked."""
    value = _scalar_value(tensor)
    if value is not None and value < 0:
        raise ShapeError(
            f"Dimension size, given by scalar input 1, must be non-negative but is {value}"
        )
    return value


def _index_input(value: Any, arg: str) -> Tensor:
    """An axis, k or depth: a tensor as it is (int32 or int64), a Python int an int32 Const
    named after the argument."""
    if is_tensor_like(value):
        return convert_to_tensor(value)
    return convert_to_tensor(value, dtypes.int32, name=arg)


def _scan_cost(
    op: Operation, ins: Sequence[tuple[int, ...]], outs: Sequence[tuple[int, ...]]
) -> Cost:
    """One comparison or addition per element of the first input (a scan, a search), which is
    read once as the outputs are written."""
    read = math.prod(ins[0])
    written = sum(math.prod(s) for s in outs)
    return Cost(float(read), float((read + written) * registry.itemsize(op)))


# -- ArgMax, ArgMin ----------------------------------------------------------------------------
def _infer_arg(op_type: str) -> Any:
    def infer(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
        x, dimension = inputs
        check_dtype("input", x.dtype, _NUMBERS_AND_BOOL)
        check_dtype("dimension", dimension.dtype, INDEX_DTYPES)
        out = attrs["output_type"]
        dims = x.shape.dims
        if dims is None:
            return single(TensorShape(None), out)
        rank = len(dims)
        if rank <= 1:  # TF's shape rule: a scalar or vector reduces to a scalar
            return single(TensorShape([]), out)
        axis = _scalar_value(dimension)
        if axis is None:
            return single(TensorShape([None] * (rank - 1)), out)
        if not -rank <= axis < rank:
            raise ShapeError(
                f"Dimension ({axis}) must be in the range [{-rank}, {rank}), where {rank} is the "
                "number of dimensions in the input."
            )
        axis %= rank
        return single(TensorShape([d for i, d in enumerate(dims) if i != axis]), out)

    return infer


def _arg_kernel(pick: str, nan_fill: float) -> Any:
    """NaNs never win, as with Eigen's comparisons."""

    def build(xp: Any, op: Operation, state: Any) -> Any:
        out = op.outputs[0].dtype.np
        floating = op.inputs[0].dtype.is_floating
        find = getattr(xp, pick)

        def arg(x: Any, dimension: Any) -> Any:
            if dimension.ndim:
                raise InvalidArgumentError(
                    "dim must be a scalar, but received tensor of shape: "
                    f"[{','.join(map(str, dimension.shape))}]",
                    op=op,
                )
            axis = int(dimension)
            if not -x.ndim <= axis < x.ndim:
                raise InvalidArgumentError(
                    f"Expected dimension in the range [{-x.ndim}, {x.ndim}), but got {axis}", op=op
                )
            if x.shape[axis] == 0:
                shape = ",".join(map(str, x.shape))
                raise InvalidArgumentError(
                    f"Reduction axis {axis % x.ndim} is empty in shape [{shape}]", op=op
                )
            if floating:
                x = xp.where(xp.isnan(x), nan_fill, x)
            return xp.asarray(find(x, axis=axis), dtype=out)

        return arg

    return build


# The placer picks kernels by the first output's dtype, the int32/int64 index both devices
# have: TF's GPU kernels take float and bool inputs only, which that cannot tell apart.
for _type, _pick, _fill in (("ArgMax", "argmax", -np.inf), ("ArgMin", "argmin", np.inf)):
    registry.register(
        OpDef(
            type=_type,
            infer=_infer_arg(_type),
            kernel=_arg_kernel(_pick, _fill),
            cost=_scan_cost,
        )
    )


def _arg(op_type: str, input: Any, axis: Any, name: str | None, dimension: Any, out: Any) -> Tensor:
    axis = deprecated_argument("axis", axis, "dimension", dimension)
    output_type = dtypes.as_dtype(out)
    with op_scope(name or op_type, (input, axis)) as scope:
        x = convert_to_tensor(input, name="input")
        dim = _index_input(0 if axis is None else axis, "dimension")
        check_dtype("output_type", output_type, INDEX_DTYPES)
        return make_op(op_type, [x, dim], scope, {"output_type": output_type}).outputs[0]


def argmax(
    input: Any,
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """TF1's ``argmax``: the index of the largest value along ``axis`` (0 when None); ties go
    to the first. ``dimension`` is its deprecated name."""
    return _arg("ArgMax", input, axis, name, dimension, output_type)


def argmin(
    input: Any,
    axis: Any = None,
    name: str | None = None,
    dimension: Any = None,
    output_type: Any = dtypes.int64,
) -> Tensor:
    """TF1's ``argmin``: the index of the smallest value along ``axis`` (0 when None)."""
    return _arg("ArgMin", input, axis, name, dimension, output_type)


# -- OneHot ------------------------------------------------------------------------------------
def _infer_one_hot(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    indices, depth, on, off = inputs
    check_dtype("indices", indices.dtype, INDEX_DTYPES)
    dtype = same_dtype("OneHot", [on, off], ("on_value", "off_value"))
    axis = attrs["axis"]
    if axis < -1:
        raise ShapeError("axis must be >= -1")
    size = _non_negative_size(depth)
    dims = indices.shape.dims
    if dims is None:
        return single(TensorShape(None), dtype)
    # TF's rule, which places an axis past the end modulo the new rank (the run refuses it)
    at = (axis + len(dims) + 1) % (len(dims) + 1)
    return single(TensorShape([*dims[:at], size, *dims[at:]]), dtype)


def _one_hot_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axis = op.attrs["axis"]

    def one_hot(indices: Any, depth: Any, on: Any, off: Any) -> Any:
        size, rank = int(depth), indices.ndim + 1
        if size < 0:
            raise InvalidArgumentError(f"depth must be non-negative, got: {size}", op=op)
        if not (axis == -1 or 0 <= axis < rank):
            raise InvalidArgumentError(
                f"Expected axis to be -1 or between [0, {rank}).  But received: {axis}", op=op
            )
        hot = indices[..., None] == xp.arange(size, dtype=indices.dtype)
        return xp.moveaxis(xp.where(hot, on, off), -1, axis)

    return one_hot


registry.register(
    OpDef(type="OneHot", infer=_infer_one_hot, kernel=_one_hot_kernel, cost=memory_cost)
)


def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: int | None = None,
    dtype: Any = None,
    name: str | None = None,
) -> Tensor:
    """TF's ``one_hot``: ``on_value`` where an index equals the position along the new ``axis``
    (the last by default), ``off_value`` elsewhere, so indices outside [0, depth) give a row of
    ``off_value``. The dtype comes from ``dtype``, else the values given, else float32."""
    target = None if dtype is None else dtypes.as_dtype(dtype)
    with op_scope(name or "one_hot", (indices, depth, on_value, off_value)) as scope:
        on = None if on_value is None else _hinted(on_value, target, "Const")
        off = None if off_value is None else _hinted(off_value, target, "Const")
        given = [t.dtype.base_dtype for t in (on, off) if t is not None]
        if given and target is not None:
            for what, t in (("on_value", on), ("off_value", off)):
                if t is not None and t.dtype.base_dtype is not target:
                    raise TypeError(
                        f"dtype {_tf_name(t.dtype)} of {what} does not match dtype parameter "
                        f"{_tf_name(target)}"
                    )
        target = target or (given[0] if given else dtypes.float32)
        if on is None:
            on = constant_op.constant(1, target, name="on_value")
        if off is None:
            off = constant_op.constant(0, target, name="off_value")
        if on.dtype.base_dtype is not off.dtype.base_dtype:
            raise TypeError(
                f"dtype {_tf_name(on.dtype)} of on_value does not match dtype "
                f"{_tf_name(off.dtype)} of off_value"
            )
        indices_t = _typed_input("OneHot", indices, "indices", INDEX_DTYPES)
        depth_t = convert_to_tensor(depth, dtypes.int32, name="depth")
        attrs = {"axis": -1 if axis is None else int(axis)}
        return make_op("OneHot", [indices_t, depth_t, on, off], scope, attrs).outputs[0]


def _hinted(value: Any, dtype: dtypes.DType | None, name: str) -> Tensor:
    """TF's ``convert_to_tensor(value, dtype_hint=dtype)``: a Python value takes the hinted dtype
    where TF converts it without loss of kind (no float to int, no bool to number), else its
    own."""
    if is_tensor_like(value):
        return convert_to_tensor(value)
    kind = np.asarray(value).dtype.kind
    fits = dtype is not None and (
        (dtype.is_floating and kind in "iuf")
        or (dtype.is_integer and kind in "iu")
        or (dtype is dtypes.bool and kind == "b")
    )
    return convert_to_tensor(value, dtype if fits else None, name=name)


def _typed_input(op_type: str, value: Any, arg: str, allowed: Sequence[dtypes.DType]) -> Tensor:
    """An input whose dtype must be one of ``allowed``: TF's op helper converts a Python value
    of another dtype twice (``indices``, ``indices_1``) before it refuses it."""
    tensor = convert_to_tensor(value, name=arg)
    if not is_tensor_like(value) and tensor.dtype not in allowed:
        convert_to_tensor(value, name=arg)
    check_dtype(arg, tensor.dtype, allowed)
    return tensor


def _tf_name(dtype: dtypes.DType) -> str:
    return f"<dtype: '{dtype.base_dtype.name}'>"


# -- TopKV2 ------------------------------------------------------------------------------------
class TopKV2(NamedTuple):
    values: Tensor
    indices: Tensor


def _infer_top_k(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x, k_t = inputs
    check_dtype("input", x.dtype, dtypes.NUMBERS)
    check_dtype("k", k_t.dtype, INDEX_DTYPES)
    index_type = attrs["index_type"]
    dims = x.shape.dims
    if dims is not None and not dims:
        raise ShapeError("Shape must be at least rank 1 but is rank 0")
    k = _non_negative_size(k_t)
    if dims is None:
        return [(TensorShape(None), x.dtype), (TensorShape(None), index_type)]
    if k is not None and dims[-1] is not None and dims[-1] < k:
        raise ShapeError(f"input must have last dimension >= k = {k} but is {dims[-1]}")
    shape = TensorShape([*dims[:-1], k])
    return [(shape, x.dtype), (shape, index_type)]


def _top_k_kernel(xp: Any, op: Operation, state: Any) -> Any:
    index_type = op.outputs[1].dtype.np

    def top_k(x: Any, k_value: Any) -> tuple[Any, Any]:
        k = int(k_value)
        if k < 0:
            raise InvalidArgumentError(f"Need k >= 0, got {k}", op=op)
        if x.shape[-1] < k:
            raise InvalidArgumentError(
                f"input must have at least k columns. Had {x.shape[-1]}, needed {k}", op=op
            )
        # Largest first and, among equal values, the lower index first: a stable sort of -x,
        # or of ~x = -x - 1 for integers, which cannot overflow.
        keys = ~x if x.dtype.kind == "i" else -x
        order = xp.argsort(keys, axis=-1, kind="stable")[..., :k]
        return xp.take_along_axis(x, order, axis=-1), order.astype(index_type)

    return top_k


registry.register(
    OpDef(
        type="TopKV2",
        infer=_infer_top_k,
        kernel=_top_k_kernel,
        cost=_scan_cost,
        supported=_NUMBER_KERNELS,
        multi_output=True,
    )
)


def top_k(
    input: Any,
    k: Any = 1,
    sorted: bool = True,
    index_type: Any = dtypes.int32,
    name: str | None = None,
) -> TopKV2:
    """The ``k`` largest entries of each row (along the last dimension) and their indices,
    largest first; equal values keep their order. ``sorted=False`` returns them in the same
    order here (TF leaves that order unspecified)."""
    target = dtypes.as_dtype(index_type)
    check_dtype("index_type", target, INDEX_DTYPES)
    with op_scope(name or "TopKV2", (input, k)) as scope:
        x = convert_to_tensor(input, name="input")
        k_t = _index_input(k, "k")
        attrs = {"sorted": bool(sorted), "index_type": target}
        values, indices = make_op("TopKV2", [x, k_t], scope, attrs).outputs
        return TopKV2(values, indices)


# -- Cumsum ------------------------------------------------------------------------------------
def _infer_cumsum(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x, axis = inputs
    check_dtype("x", x.dtype, dtypes.NUMBERS)
    check_dtype("axis", axis.dtype, INDEX_DTYPES)
    return single(x.shape, x.dtype)


def _cumsum_kernel(xp: Any, op: Operation, state: Any) -> Any:
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    dtype = op.outputs[0].dtype.np

    def cumsum(x: Any, axis_value: Any) -> Any:
        if axis_value.ndim:
            raise InvalidArgumentError(
                f"ScanOp: axis must be a scalar, not {list(axis_value.shape)}", op=op
            )
        axis = int(axis_value)
        if not -x.ndim <= axis < x.ndim:
            raise InvalidArgumentError(
                f"ScanOp: Expected scan axis in the range [{-x.ndim}, {x.ndim}), but got {axis}",
                op=op,
            )
        values = xp.flip(x, axis) if reverse else x
        summed = xp.cumsum(values, axis=axis, dtype=dtype)
        if exclusive:  # shifted one place along the axis, a zero first (TF's exclusive scan)
            summed = xp.roll(summed, 1, axis=axis)
            index = [slice(None)] * x.ndim
            index[axis] = slice(0, 1)
            summed[tuple(index)] = 0
        return xp.flip(summed, axis) if reverse else summed

    return cumsum


registry.register(
    OpDef(
        type="Cumsum",
        infer=_infer_cumsum,
        kernel=_cumsum_kernel,
        cost=_scan_cost,
        supported=_NUMBER_KERNELS,
    )
)


def cumsum(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Tensor:
    """Running sums along ``axis``: ``exclusive`` leaves each element out of its own sum,
    ``reverse`` sums from the end."""
    with op_scope(name or "Cumsum", (x,)) as scope:
        tensor = convert_to_tensor(x, name="x")
        axis_t = _index_input(axis, "axis")
        attrs = {"exclusive": bool(exclusive), "reverse": bool(reverse)}
        return make_op("Cumsum", [tensor, axis_t], scope, attrs).outputs[0]


# -- Where (one argument) ----------------------------------------------------------------------
def _infer_where(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    x = inputs[0]
    check_dtype("input", x.dtype, _NUMBERS_AND_BOOL)
    return single(TensorShape([None, x.shape.ndims]), dtypes.int64)


def _where_kernel(xp: Any, op: Operation, state: Any) -> Any:
    def where(x: Any) -> Any:
        if x.ndim == 0:
            raise InvalidArgumentError("WhereOp : Unhandled input dimensions: 0", op=op)
        return xp.argwhere(x).astype(np.int64)

    return where


registry.register(OpDef(type="Where", infer=_infer_where, kernel=_where_kernel, cost=_scan_cost))


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Tensor:
    """TF1's ``where``: with ``condition`` alone the int64 coordinates of its true (non-zero)
    elements, one row each in row-major order; with ``x`` and ``y`` a ``Select`` of them."""
    if x is None and y is None:
        with op_scope(name or "Where", (condition,)) as scope:
            cond = _hinted(condition, dtypes.bool, "condition")
            return make_op("Where", [cond], scope).outputs[0]
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    with op_scope(name or "Select", (condition, x, y)) as scope:
        cond = convert_to_tensor(condition, dtypes.bool, name="condition")
        tx = convert_to_tensor(x, name="t")  # TF1's Select names its values t and e
        ty = convert_to_tensor(y, tx.dtype, name="e")
        return make_op("Select", [cond, tx, ty], scope).outputs[0]


# -- ScatterNd ---------------------------------------------------------------------------------
def _infer_scatter_nd(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    indices, updates, shape = inputs
    check_dtype("indices", indices.dtype, INDEX_DTYPES)
    value = folded_value(shape)
    if value is not None:
        return single(TensorShape(int(d) for d in value.reshape(-1)), updates.dtype)
    return single(shape_from_tensor(shape), updates.dtype)


def _scatter_nd_with(scatter_add: Callable[[Any], Callable[..., None]]) -> Any:
    """ScatterNd's kernel builder around ``out[rows] += values`` summing repeated rows, which
    NumPy spells ``add.at`` and CuPy ``cupyx.scatter_add`` (chosen once, when it is built)."""

    def build(xp: Any, op: Operation, state: Any) -> Any:
        dtype = op.outputs[0].dtype.np
        add = scatter_add(xp)

        def scatter_nd(indices: Any, updates: Any, shape_value: Any) -> Any:
            shape = tuple(int(d) for d in shape_value.reshape(-1).tolist())
            depth = indices.shape[-1]
            rows = indices.reshape(-1, depth)
            bad = xp.any((rows < 0) | (rows >= xp.asarray(shape[:depth])), axis=1)
            if bool(bad.any()):
                first = int(xp.argmax(bad))
                raise InvalidArgumentError(
                    f"indices[{first}] = {rows[first].tolist()} does not index into shape "
                    f"{list(shape)}",
                    op=op,
                )
            out = xp.zeros((math.prod(shape[:depth]), *shape[depth:]), dtype=dtype)
            flat = (
                xp.ravel_multi_index(tuple(rows.T), shape[:depth])
                if depth
                else xp.zeros(len(rows), dtype=np.int64)
            )
            add(out, flat, updates.reshape(len(rows), *shape[depth:]))
            return out.reshape(shape)

        return scatter_nd

    return build


def _cupy_scatter_add(xp: Any) -> Callable[..., None]:
    import cupyx  # only where a session has a real GPU

    return cupyx.scatter_add


registry.register(
    OpDef(
        type="ScatterNd",
        infer=_infer_scatter_nd,
        kernel=_scatter_nd_with(lambda xp: np.add.at),
        kernel_overrides={"cupy": _scatter_nd_with(_cupy_scatter_add)},
        cost=memory_cost,
        supported=_NUMBER_KERNELS,
    )
)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: str | None = None) -> Tensor:
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (repeated indices sum)."""
    with op_scope(name or "ScatterNd", (indices, updates, shape)) as scope:
        tensors = [
            convert_to_tensor(indices, name="indices"),
            convert_to_tensor(updates, name="updates"),
            _int_input(shape, "shape"),
        ]
        return make_op("ScatterNd", tensors, scope).outputs[0]


# -- what construction can compute of a small constant subgraph --------------------------------
_FOLD_ELEMENTS = 1024


def folded_value(tensor: Tensor) -> np.ndarray | None:
    """The tensor's value where every op behind it is a pure function of constants, as TF's
    shape inference evaluates such subgraphs (a ScatterNd's shape from a Prod, a stitch's
    indices from a DynamicPartition of a Range); None otherwise or where a kernel refuses."""
    value = constant_value(tensor)
    if value is not None:
        return value
    op = tensor.op
    op_def = op.op_def
    if op_def.stateful or op_def.needs_feed or op_def.control_only or op_def.ref_output:
        return None
    if op.control_inputs or not op.inputs:
        return None
    inputs = []
    for t in op.inputs:
        count = t.shape.num_elements()
        if count is not None and count > _FOLD_ELEMENTS:
            return None
        folded = folded_value(t)
        if folded is None or folded.size > _FOLD_ELEMENTS:
            return None
        inputs.append(folded)
    try:
        result = op_def.kernel_for("numpy")(np, op, None)(*inputs)
    except (InvalidArgumentError, ValueError, IndexError, TypeError):
        return None
    return np.asarray(result[tensor.value_index] if op_def.multi_output else result)


# -- boolean_mask ------------------------------------------------------------------------------
def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None) -> Tensor:
    """The slices of ``tensor`` (from ``axis`` on, as many dimensions as ``mask`` has) where
    ``mask`` is true, built as TF1 builds it: flatten those dimensions, then gather the
    positions ``where`` finds."""
    from placeviz.graph.ops import array_ops, math_ops

    with op_scope(name, (tensor, mask)):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        ndims_mask = mask.shape.ndims
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError(
                "Number of mask dimensions must be specified, even if some dimensions are "
                "None.  E.g. shape=[None] is ok, but shape=None is not."
            )
        axis = 0 if axis is None else int(axis)
        dims = tensor.shape.dims
        if dims is not None:
            TensorShape(dims[axis : axis + ndims_mask]).merge_with(mask.shape)
        leading = math_ops.reduce_prod(array_ops.shape(tensor)[axis : axis + ndims_mask], [0])
        flat = array_ops.reshape(
            tensor,
            array_ops.concat(
                [
                    array_ops.shape(tensor)[:axis],
                    [leading],
                    array_ops.shape(tensor)[axis + ndims_mask :],
                ],
                0,
            ),
        )
        if dims is not None:
            first = TensorShape(dims[axis : axis + ndims_mask]).num_elements()
            flat.set_shape([*dims[:axis], first, *dims[axis + ndims_mask :]])
        mask = array_ops.reshape(mask, [-1])
        indices = array_ops.squeeze(where(mask), axis=[1])
        return array_ops.gather(flat, indices, axis=axis)
