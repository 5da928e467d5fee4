"""Gradients of reshapes, joins, splits, slices, gathers, casts and Identity (TF's array_grad.py).

Each function gets the forward op and the gradients of its outputs (None where an output has
none and is not a float), and returns one gradient per input.
"""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import (
    first_input_only,
    not_differentiable,
    register_gradient,
)
from placeviz.graph.grads.shapes import reduce_broadcast, shape_of
from placeviz.graph.ops import array_ops, constant_op, math_ops, shape_ops, slicing
from placeviz.graph.shapes import normalize_axis
from placeviz.graph.while_loop import output_context

Grads = list[Tensor | None]

not_differentiable(
    "InvertPermutation",
    "Const",
    "Placeholder",
    "VariableV2",
    "Assign",
    "AssignAdd",
    "AssignSub",
    "NoOp",
    "ZerosLike",
    "Fill",
    "RandomUniform",
    "RandomStandardNormal",
    "TruncatedNormal",
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
    """TF's: an input shape with one unknown dimension (and no zero) is a Const with -1 there,
    which needs no run-time ``Shape``; any other is the input's shape."""
    dims = op.inputs[0].shape.dims
    if dims is not None and dims.count(None) == 1 and 0 not in dims:
        return first_input_only(op, array_ops.reshape(grad, [-1 if d is None else d for d in dims]))
    return _reshape_to_input(op, grad)


@register_gradient("Squeeze")
@register_gradient("ExpandDims")
def _reshape_to_input(op: Operation, grad: Tensor) -> Grads:
    """TF's: the gradient reshaped to the input's ``Shape`` (a Const when it is known)."""
    return first_input_only(op, array_ops.reshape(grad, shape_of(op.inputs[0])))


@register_gradient("Transpose")
def _transpose_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's: transposed back by the ``InvertPermutation`` of the perm input."""
    if len(op.inputs) == 1:  # an input of unknown rank reversed: reversing undoes it
        return [array_ops.transpose(grad)]
    return first_input_only(
        op, array_ops.transpose(grad, array_ops.invert_permutation(op.inputs[1]))
    )


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


@register_gradient("Split")
def _split_grad(op: Operation, *grads: Tensor) -> Grads:
    """TF's: the pieces' gradients concatenated along Split's split_dim input (its first)."""
    return [None, array_ops.concat(list(grads), op.inputs[0])]


@register_gradient("SplitV")
def _split_v_grad(op: Operation, *grads: Tensor) -> Grads:
    """TF's: concatenated along SplitV's split_dim input (its last)."""
    return first_input_only(op, array_ops.concat(list(grads), op.inputs[2]))


@register_gradient("ConcatV2")
def _concat_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's ``_ConcatGradHelper``: the axis modulo the ``Rank``, each input's ``Shape``, their
    ``ConcatOffset`` and one ``Slice`` of the gradient per input; the axis gets none."""
    values, axis = op.inputs[:-1], op.inputs[-1]
    if axis.op.type == "Const" and output_context(axis.op) is not output_context(grad.op):
        # TF's: a constant axis from another frame is made again here, not entered
        axis = constant_op.constant(shape_ops.constant_value(axis), dtype=axis.dtype)
    along = math_ops.mod(axis, shape_ops.rank(values[0], optimize=True), name="mod")  # TF: %
    shapes = [
        shape_ops.shape(v, name="Shape" if i == 0 else f"Shape_{i}", optimize=True)
        for i, v in enumerate(values)
    ]
    offsets = shape_ops.concat_offset(along, shapes)
    return [*(shape_ops.slice(grad, b, s) for b, s in zip(offsets, shapes)), None]


# -- slices, tiles and gathers -----------------------------------------------------------------
@register_gradient("Slice")
def _slice_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's ``_SliceGrad``: pad the gradient with zeros back to the input's shape, the
    paddings built from ``begin`` and the input's and output's shapes as [rank, 1] columns."""
    x, begin, y = op.inputs[0], op.inputs[1], op.outputs[0]
    dtype = begin.dtype
    column = array_ops.stack([shape_ops.rank(x, optimize=True), 1])
    size = shape_ops.shape(y, out_type=dtype, optimize=True)
    before = array_ops.reshape(begin, column)
    whole = shape_ops.shape(x, name="Shape_1", out_type=dtype, optimize=True)
    rest = math_ops.subtract(math_ops.subtract(whole, size, name="sub"), begin, name="sub")
    after = array_ops.reshape(rest, column)
    return first_input_only(op, array_ops.pad(grad, array_ops.concat([before, after], 1)))


@register_gradient("StridedSlice")
def _strided_slice_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's ``_StridedSliceGrad``: the gradient scattered into zeros of the input's shape, with
    the bounds as values where construction knows them."""
    x, *vectors = op.inputs
    shape = shape_ops.shape(x, out_type=vectors[0].dtype, optimize=True)
    args = []
    for tensor in (shape, *vectors):
        value = shape_ops.constant_value(tensor)
        args.append(tensor if value is None else value)
    masks = {k: op.attrs[k] for k in slicing.MASKS}
    return first_input_only(op, slicing.strided_slice_grad(*args, grad, masks))


@register_gradient("Tile")
def _tile_grad(op: Operation, grad: Tensor) -> Grads:
    """Sum the tiled copies (TF's ``_TileGrad``): reshape the gradient to interleaved
    (multiple, size) pairs, ``[2, 20, 3, 30]`` for multiples [2, 3] of a [20, 30] input, and sum
    over every other axis (a ``Range`` up to the pairs' ``Size``)."""
    x, multiples = op.inputs
    input_shape = shape_ops.shape(x, out_type=multiples.dtype, optimize=True)
    pairs = array_ops.transpose(array_ops.stack([multiples, input_shape]))
    split_shape = array_ops.reshape(pairs, [-1])
    axes = math_ops.arange(0, array_ops.size(split_shape), 2)
    summed = shape_ops.reduce_sum(array_ops.reshape(grad, split_shape), axes)
    summed.set_shape(x.shape)
    return first_input_only(op, summed)


@register_gradient("GatherV2")
def _gather_grad(op: Operation, grad: Tensor) -> Grads:
    """Dense, unlike TF's IndexedSlices: rows gathered twice get both gradients summed."""
    params, indices, _ = op.inputs
    p_rank, i_rank = params.shape.ndims, indices.shape.ndims
    axis = normalize_axis(op.attrs["axis"], p_rank)
    size = params.shape[axis] if p_rank is not None else None
    if size is not None:
        num = constant_op.constant(size, dtype=indices.dtype)
    else:
        num = array_ops.gather(shape_ops.shape(params, out_type=indices.dtype), axis)
    if axis == 0:
        return [math_ops.unsorted_segment_sum(grad, indices, num), None, None]
    if p_rank is None or i_rank is None:
        raise LookupError(
            f"No gradient for '{op.name}': GatherV2 along axis {axis} needs static ranks"
        )
    # Move the gathered dimensions to the front, sum into rows, and move the rows back.
    front = list(range(axis, axis + i_rank))
    rest = list(range(axis)) + list(range(axis + i_rank, p_rank + i_rank - 1))
    rows = math_ops.unsorted_segment_sum(array_ops.transpose(grad, front + rest), indices, num)
    back = [*range(1, axis + 1), 0, *range(axis + 1, p_rank)]
    return [array_ops.transpose(rows, back), None, None]
