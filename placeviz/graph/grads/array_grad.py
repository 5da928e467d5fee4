"""Gradients of reshapes, joins, splits, slices, gathers, casts and Identity (TF's array_grad.py).

Each function gets the forward op and the gradients of its outputs (None where an output has
none and is not a float), and returns one gradient per input.
"""

from __future__ import annotations

import numpy as np

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import (
    first_input_only,
    not_differentiable,
    register_gradient,
)
from placeviz.graph.grads.shapes import reduce_broadcast, reshape_like, shape_of
from placeviz.graph.ops import array_ops, constant_op, math_ops, shape_ops
from placeviz.graph.shapes import normalize_axis

Grads = list[Tensor | None]

not_differentiable(
    "Const",
    "Placeholder",
    "VariableV2",
    "Assign",
    "AssignAdd",
    "NoOp",
    "ZerosLike",
    "OnesLike",
    "Fill",
    "RandomUniform",
    "RandomStandardNormal",
    "Shape",
    "Size",
    "ConcatOffset",
    "ReducedShape",
)


@register_gradient("Identity")
def _identity_grad(op: Operation, grad: Tensor) -> Grads:
    """Also a variable's ``read``: the gradient reaches the variable's reference unchanged."""
    return [grad]


@register_gradient("Cast")
def _cast_grad(op: Operation, grad: Tensor) -> Grads:
    """Only between float types: an integer or bool side carries no gradient."""
    source = op.inputs[0].dtype
    if source.is_floating and op.outputs[0].dtype.is_floating:
        return [array_ops.cast(grad, source)]
    return [None]


# -- reshapes ----------------------------------------------------------------------------------
@register_gradient("Reshape")
def _reshape_grad(op: Operation, grad: Tensor) -> Grads:
    return first_input_only(op, reshape_like(grad, op.inputs[0]))


@register_gradient("Squeeze")
@register_gradient("ExpandDims")
def _squeeze_or_expand_dims_grad(op: Operation, grad: Tensor) -> Grads:
    return first_input_only(op, reshape_like(grad, op.inputs[0]))


@register_gradient("Transpose")
def _transpose_grad(op: Operation, grad: Tensor) -> Grads:
    perm = op.attrs["perm"]
    inverse = None if perm is None else [int(p) for p in np.argsort(perm)]
    return first_input_only(op, array_ops.transpose(grad, inverse))


@register_gradient("BroadcastTo")
def _broadcast_to_grad(op: Operation, grad: Tensor) -> Grads:
    x = op.inputs[0]
    gx, _ = reduce_broadcast(x, op.outputs[0], grad, None)
    return [gx, None]


# -- joins and splits --------------------------------------------------------------------------
@register_gradient("Pack")
def _pack_grad(op: Operation, grad: Tensor) -> Grads:
    return list(array_ops.unstack(grad, num=len(op.inputs), axis=op.attrs["axis"]))


@register_gradient("Unpack")
def _unpack_grad(op: Operation, *grads: Tensor) -> Grads:
    return [array_ops.stack(list(grads), axis=op.attrs["axis"])]


def _join(grads: tuple[Tensor, ...], axis: int) -> Tensor:
    return grads[0] if len(grads) == 1 else array_ops.concat(list(grads), axis=axis)


@register_gradient("Split")
@register_gradient("SplitV")
def _split_grad(op: Operation, *grads: Tensor) -> Grads:
    return [_join(grads, op.attrs["axis"])]


@register_gradient("ConcatV2")
def _concat_grad(op: Operation, grad: Tensor) -> Grads:
    """Split the gradient where the inputs met: SplitV when their sizes along the axis are
    static (one may be unknown), else TF's ConcatOffset and one Slice per input."""
    values = op.inputs
    rank = values[0].shape.ndims
    if rank is not None:
        axis = normalize_axis(op.attrs["axis"], rank)
        sizes = [v.shape[axis] for v in values]
        if sizes.count(None) <= 1:
            split = [-1 if s is None else s for s in sizes]
            return list(array_ops.split(grad, split, axis=axis))
    shapes = [shape_ops.shape(v) for v in values]
    offsets = shape_ops.concat_offset(op.attrs["axis"], shapes)
    return [shape_ops.slice(grad, b, s) for b, s in zip(offsets, shapes)]


# -- slices and gathers ------------------------------------------------------------------------
@register_gradient("Slice")
def _slice_grad(op: Operation, grad: Tensor) -> Grads:
    """Pad the gradient with zeros back to the input's shape."""
    if len(op.inputs) != 1:
        raise LookupError(f"No gradient for '{op.name}': a Slice with run-time bounds")
    x, y = op.inputs[0], op.outputs[0]
    begin = op.attrs["begin"]
    if x.shape.is_fully_defined and y.shape.is_fully_defined:
        after = [d - b - s for d, b, s in zip(x.shape.as_list(), begin, y.shape.as_list())]
        return [array_ops.pad(grad, [[b, a] for b, a in zip(begin, after)])]
    before = constant_op.constant(list(begin), dtype="int32", name="begin")
    after = math_ops.subtract(math_ops.subtract(shape_of(x), shape_of(y, "Shape_1")), before)
    return [array_ops.pad(grad, array_ops.stack([before, after], axis=1))]


@register_gradient("GatherV2")
def _gather_grad(op: Operation, grad: Tensor) -> Grads:
    """Dense, unlike TF's IndexedSlices: rows gathered twice get both gradients summed."""
    params, indices = op.inputs
    p_rank, i_rank = params.shape.ndims, indices.shape.ndims
    axis = normalize_axis(op.attrs["axis"], p_rank)
    size = params.shape[axis] if p_rank is not None else None
    if size is not None:
        num = constant_op.constant(size, dtype=indices.dtype)
    else:
        num = array_ops.gather(shape_ops.shape(params, out_type=indices.dtype), axis)
    if axis == 0:
        return [math_ops.unsorted_segment_sum(grad, indices, num), None]
    if p_rank is None or i_rank is None:
        raise LookupError(
            f"No gradient for '{op.name}': GatherV2 along axis {axis} needs static ranks"
        )
    # Move the gathered dimensions to the front, sum into rows, and move the rows back.
    front = list(range(axis, axis + i_rank))
    rest = list(range(axis)) + list(range(axis + i_rank, p_rank + i_rank - 1))
    rows = math_ops.unsorted_segment_sum(array_ops.transpose(grad, front + rest), indices, num)
    back = [*range(1, axis + 1), 0, *range(axis + 1, p_rank)]
    return [array_ops.transpose(rows, back), None]
