"""Gradients of TopKV2, Cumsum and the embedding ops' partition and stitch (TF's nn_grad.py,
math_grad.py and data_flow_grad.py); ArgMax, ArgMin, OneHot and Where pass none."""

from __future__ import annotations

import math

from placeviz import dtypes
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import not_differentiable, register_gradient
from placeviz.graph.grads.shapes import shape_of
from placeviz.graph.ops import array_ops, math_ops, selection_ops
from placeviz.graph.ops.embedding_ops import dynamic_partition, parallel_dynamic_stitch

Grads = list[Tensor | None]

not_differentiable("ArgMax", "ArgMin", "OneHot", "Where")


def _last(shape: Tensor) -> Tensor:
    """The last entry of a shape vector, as int64 (TF's: int32 gathers have no GPU kernel)."""
    return array_ops.gather(array_ops.cast(shape, dtypes.int64), array_ops.size(shape) - 1)


def _rows(indices: Tensor) -> int | None:
    """The rows of top_k's indices flattened to 2-D, where their shape is known."""
    dims = indices.shape.dims
    if dims is None or None in dims:
        return None
    return math.prod(dims[:-1])


@register_gradient("TopKV2")
def _top_k_grad(op: Operation, grad: Tensor, _: Tensor | None) -> Grads:
    """TF's ``_TopKGrad``: each value's gradient scattered to where it was found (flat
    positions row * width + index) in zeros of the input's shape; k gets a zero."""
    x, indices = op.inputs[0], op.outputs[1]
    in_shape = shape_of(x)
    ind_shape = shape_of(indices, "Shape_1")
    ind_2d = array_ops.reshape(indices, array_ops.stack([-1, _last(ind_shape)]))
    rows = _rows(indices)
    if rows is not None:  # what TF's shape inference folds from the Const shapes
        ind_2d.set_shape([rows, indices.shape[-1]])
    in_lastdim = _last(in_shape)
    outer = shape_of(ind_2d, "Shape_2")[0]
    starts = math_ops.arange(0, array_ops.cast(outer, dtypes.int64) * in_lastdim, in_lastdim)
    starts.set_shape([rows])
    offsets = array_ops.cast(array_ops.expand_dims(starts, -1), dtypes.int32)
    flat = array_ops.reshape(ind_2d + offsets, [-1])
    scattered = selection_ops.scatter_nd(
        array_ops.expand_dims(flat, -1),
        array_ops.reshape(grad, [-1]),
        [math_ops.reduce_prod(in_shape)],
    )
    return [array_ops.reshape(scattered, in_shape), array_ops.zeros([], dtype=dtypes.int32)]


@register_gradient("Cumsum")
def _cumsum_grad(op: Operation, grad: Tensor) -> Grads:
    """A cumsum the other way along the same axis input."""
    exclusive, reverse = op.attrs["exclusive"], op.attrs["reverse"]
    return [selection_ops.cumsum(grad, op.inputs[1], exclusive, not reverse), None]


@register_gradient("DynamicPartition")
def _dynamic_partition_grad(op: Operation, *grads: Tensor) -> Grads:
    """TF's: the positions of the data's rows partitioned the same way stitch the pieces'
    gradients back in order."""
    data, partitions = op.inputs
    prefix = shape_of(partitions)
    positions = array_ops.reshape(math_ops.arange(math_ops.reduce_prod(prefix)), prefix)
    pieces = dynamic_partition(positions, partitions, op.attrs["num_partitions"])
    stitched = parallel_dynamic_stitch(pieces, list(grads))
    return [array_ops.reshape(stitched, shape_of(data, "Shape_1")), None]


@register_gradient("DynamicStitch")
@register_gradient("ParallelDynamicStitch")
def _dynamic_stitch_grad(op: Operation, grad: Tensor) -> Grads:
    """Each piece's gradient gathered from the rows its indices wrote; indices get none."""
    n = len(op.inputs) // 2
    return [None] * n + [array_ops.gather(grad, index) for index in op.inputs[:n]]
