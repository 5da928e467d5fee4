"""Gradients of ``BatchMatMulV2`` and ``SparseMatMul`` (TF's math_grad ``_BatchMatMulV2`` and
``_SparseMatMulGrad``) and ``Einsum`` (TF's linalg_grad ``_EinsumGrad``), built with the ops and
names TensorFlow 2.21 gives them."""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import register_gradient
from placeviz.graph.grads.shapes import shape_of
from placeviz.graph.ops import array_ops, constant_op, embedding_ops, math_ops, shape_ops
from placeviz.graph.ops.linalg_ops import ELLIPSIS, einsum_op, split_equation

Grads = list[Tensor | None]


def _unbroadcast(
    gx: Tensor, gy: Tensor, sx: Tensor, sy: Tensor, x_batch: slice, y_batch: slice, shift: bool
) -> tuple[Tensor, Tensor]:
    """Sum each gradient over the batch axes broadcasting gave it and reshape it to its
    operand's shape: ``BroadcastGradientArgs`` of the shapes' batch slices (``StridedSlice``),
    with ``shift`` each axis list moved to where the operand's batch axes start (TF's ``add``)."""
    rx, ry = shape_ops.broadcast_gradient_args(sx[x_batch], sy[y_batch])
    summed = []
    for g, r, s, batch in ((gx, rx, sx, x_batch), (gy, ry, sy, y_batch)):
        axes = batch.start + r if shift else r
        summed.append(array_ops.reshape(shape_ops.reduce_sum(g, axes), s))
    return summed[0], summed[1]


@register_gradient("BatchMatMulV2")
def _batch_matmul_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's four cases, each product a ``BatchMatMulV2`` reading the operands as stored; batch
    dimensions that broadcast are summed away unless both static batch shapes are known and
    equal."""
    x, y = op.inputs
    adj_x, adj_y = op.attrs["adj_x"], op.attrs["adj_y"]
    mm = math_ops.matmul
    if not adj_x and not adj_y:
        gx = mm(grad, y, adjoint_b=True, grad_a=True)
        gy = mm(x, grad, adjoint_a=True, grad_b=True)
    elif not adj_x:
        gx = mm(grad, y, grad_a=True)
        gy = mm(grad, x, adjoint_a=True, grad_b=True)
    elif not adj_y:
        gx = mm(y, grad, adjoint_b=True, grad_a=True)
        gy = mm(x, grad, grad_b=True)
    else:
        gx = mm(y, grad, adjoint_a=True, adjoint_b=True, grad_a=True)
        gy = mm(grad, x, adjoint_a=True, adjoint_b=True, grad_b=True)
    x_batch, y_batch = x.shape[:-2], y.shape[:-2]
    if x_batch.is_fully_defined and y_batch.is_fully_defined and x_batch == y_batch:
        return [gx, gy]
    rest = slice(None, -2)
    return list(_unbroadcast(gx, gy, shape_of(x), shape_of(y), rest, rest, shift=False))


@register_gradient("SparseMatMul")
def _sparse_matmul_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's: MatMul's four cases, each product a ``matmul`` that keeps its operands' sparsity
    hints (the output gradient is sparse when a ``ReluGrad`` made it); a transposed second
    operand becomes a ``Transpose``, as SparseMatMul's gradient products take none."""
    a, b = op.inputs
    sparse = {id(a): op.attrs["a_is_sparse"], id(b): op.attrs["b_is_sparse"]}
    sparse[id(grad)] = grad.op.type == "ReluGrad"

    def product(t1: Tensor, t2: Tensor, transpose_a: bool = False, transpose_b: bool = False):
        hints = {"a_is_sparse": sparse[id(t1)], "b_is_sparse": sparse[id(t2)]}
        if transpose_b:
            t2 = array_ops.transpose(t2)
        return math_ops.matmul(t1, t2, transpose_a=transpose_a, **hints)

    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return [product(grad, b, transpose_b=True), product(a, grad, transpose_a=True)]
    if not ta:
        return [product(grad, b), product(grad, a, transpose_a=True)]
    if not tb:
        return [product(b, grad, transpose_b=True), product(a, grad)]
    return [
        product(b, grad, transpose_a=True, transpose_b=True),
        product(grad, a, transpose_a=True, transpose_b=True),
    ]


# -- Einsum ------------------------------------------------------------------------------------
def _axis_of(subs: str, label: str) -> int:
    """The label's leftmost axis: from the front before ``...``, from the back after it."""
    before, _, after = subs.partition(ELLIPSIS)
    index = before.find(label)
    return index if index != -1 else after.find(label) - len(after)


def _ellipsis_axes(subs: str) -> slice:
    """The axes ``...`` covers in an operand with these subscripts (none without one)."""
    start = subs.find(ELLIPSIS)
    if start == -1:
        return slice(0, 0)
    remaining = len(subs) - start - len(ELLIPSIS)
    return slice(start, -remaining if remaining else None)


def _reduced_shape(input_shape: Tensor, axes: list[int]) -> Any:
    """TF's ``math_ops.reduced_shape``: the input's shape with the reduced axes 1, a list where
    construction knows the shape, else made at run time by a ``DynamicStitch`` of ones into it."""
    axes_tensor = constant_op.constant(axes, dtypes.int32)
    known = shape_ops.constant_value(input_shape)
    if known is not None:
        keep = known.copy()
        keep[axes] = 1
        return keep.tolist()
    rank = shape_ops.size(input_shape, optimize=True)
    wrapped = math_ops.mod(math_ops.add(axes_tensor, rank, name="add"), rank, name="mod")
    axes_shape = shape_of(wrapped)
    indices = [math_ops.arange(rank), wrapped]
    with input_shape.graph.name_scope("ones") as scope:  # TF's ones of a shape tensor: a Fill
        ones = shape_ops.fill(axes_shape, constant_op.constant(1, dtypes.int32), scope)
    return embedding_ops.dynamic_stitch(indices, [input_shape, ones])


def _grad_reduced(
    grad: Tensor, output_subs: str, input_subs: str, input_shape: Tensor, reduced: str
) -> Tensor:
    """TF's ``_GetGradReduced``: the gradient of a one-operand einsum that sums the labels in
    ``reduced`` away, spread back by broadcasting (and an ``Einsum`` where the remaining labels
    are repeated or reordered)."""
    axes = [_axis_of(input_subs, label) for label in reduced]
    reduced_dims = array_ops.stack([input_shape[axis] for axis in axes])
    repeated = len(set(input_subs)) + len(set(output_subs)) < len(input_subs) + len(output_subs)
    kept = "".join(c for c in input_subs if c not in reduced)
    if not repeated and kept == output_subs:
        keep = _reduced_shape(input_shape, axes)
        return shape_ops.broadcast_to(array_ops.reshape(grad, keep), input_shape)
    expanded = array_ops.concat([reduced_dims, shape_of(grad)], 0)
    with grad.graph.name_scope("ones") as scope:  # TF's ones(n, int32): a Fill
        ones = shape_ops.fill(
            constant_op.constant([len(reduced)], dtypes.int32, name="shape_as_tensor"),
            constant_op.constant(1, dtypes.int32),
            name=scope,
        )
    keep_shape = array_ops.concat([ones, shape_of(grad)], 0)
    spread = shape_ops.broadcast_to(shape_ops.reshape(grad, keep_shape), expanded)
    return einsum_op([spread], f"{reduced + output_subs}->{input_subs}")


def _grad_wrt(
    grad: Tensor, other: Tensor, input_shape: Tensor, input_subs: str, other_subs: str,
    output_subs: str,
) -> Tensor:  # fmt: skip
    """TF's ``_GetGradWrt``: the einsum of the output gradient and the other operand back to
    this operand's labels, then the reduction's gradient for labels only this operand has."""
    reduced = "".join(sorted(set(input_subs) - set(output_subs + other_subs + ".")))
    left = "".join(c for c in input_subs if c not in reduced)
    grad_reduced = einsum_op([grad, other], f"{output_subs},{other_subs}->{left}")
    if not reduced:
        return grad_reduced
    return _grad_reduced(grad_reduced, left, input_subs, input_shape, reduced)


@register_gradient("Einsum")
def _einsum_grad(op: Operation, grad: Tensor) -> Grads:
    """Each operand's gradient is the einsum with the output's and the other operand's
    subscripts swapped; broadcast ``...`` dimensions are summed back to each operand's."""
    input_subs, output_subs = split_equation(op.attrs["equation"])
    if len(op.inputs) == 1:
        (subs,) = input_subs
        input_shape = shape_of(op.inputs[0])
        reduced = "".join(sorted(set(subs) - set(output_subs + ".")))
        if not reduced:
            return [einsum_op([grad], f"{output_subs}->{subs}")]
        return [_grad_reduced(grad, output_subs, subs, input_shape, reduced)]
    x_subs, y_subs = input_subs
    if ELLIPSIS in output_subs:
        x_subs += "" if ELLIPSIS in x_subs else ELLIPSIS
        y_subs += "" if ELLIPSIS in y_subs else ELLIPSIS
    x, y = op.inputs
    x_shape, y_shape = shape_of(x), shape_of(y)
    gx = _grad_wrt(grad, y, x_shape, x_subs, y_subs, output_subs)
    gy = _grad_wrt(grad, x, y_shape, y_subs, x_subs, output_subs)
    if ELLIPSIS not in output_subs:
        return [gx, gy]
    bx, by = _ellipsis_axes(x_subs), _ellipsis_axes(y_subs)
    if x.shape.is_fully_defined and y.shape.is_fully_defined and x.shape[bx] == y.shape[by]:
        return [gx, gy]
    return list(_unbroadcast(gx, gy, x_shape, y_shape, bx, by, shift=True))
