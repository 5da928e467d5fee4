"""Shape plumbing shared by gradient functions: static where shapes are known, run-time if not.

Where every static shape involved is fully defined the helpers build no shape ops at all (as
TF's ``SmartBroadcastGradientArgs``); otherwise they read shapes at run time with ``Shape`` and
``BroadcastGradientArgs``, so gradients of ``placeholder(float32)`` programs still work.
"""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import array_ops, math_ops, shape_ops
from placeviz.graph.shapes import normalize_axis


def shape_of(tensor: Tensor, name: str = "Shape") -> Tensor:
    """TF's ``shape(optimize=True)``: a Const when the static shape is fully defined."""
    return shape_ops.shape(tensor, name=name, optimize=True)


def broadcast_like(grad: Tensor, like: Tensor) -> Tensor:
    """``grad`` broadcast to ``like``'s shape."""
    if like.shape.is_fully_defined and grad.shape == like.shape:
        return grad
    return shape_ops.broadcast_to(grad, shape_of(like))


def reduce_broadcast(
    x: Tensor, y: Tensor, gx: Tensor | None, gy: Tensor | None
) -> tuple[Tensor | None, Tensor | None]:
    """Sum gradients taken with respect to ``broadcast(x, y)`` back to x's and y's shapes, as
    TF's ``_ReduceGradientArgs``: the shapes are ``Shape`` and ``Shape_1`` (Consts when known);
    the axes to sum are static where the static shapes tell which dimensions broadcast, else
    ``BroadcastGradientArgs`` computes them at run time; each sum keeps its dimensions and is
    reshaped to its operand's shape."""
    if gx is None and gy is None:
        return gx, gy
    sx, sy = shape_of(x), shape_of(y)
    static = _static_reduction_axes(x, y)
    if static is None:
        rx, ry = shape_ops.broadcast_gradient_args(sx, sy)
        return _sum_to(gx, rx, sx), _sum_to(gy, ry, sy)
    (rx_axes, ry_axes), rank_x, rank_y = static, x.shape.ndims, y.shape.ndims
    out_x = _sum_to(gx, rx_axes, sx) if rx_axes or rank_x < rank_y else gx  # type: ignore[operator]
    out_y = _sum_to(gy, ry_axes, sy) if ry_axes or rank_y < rank_x else gy  # type: ignore[operator]
    return out_x, out_y


def _static_reduction_axes(x: Tensor, y: Tensor) -> tuple[list[int], list[int]] | None:
    """TF's ``_InferGradientReductionAxes``: the axes along which x and y were broadcast, or
    None when an unknown dimension leaves it to the run."""
    if x.shape.dims is None or y.shape.dims is None:
        return None
    rank = max(len(x.shape.dims), len(y.shape.dims))
    px = [1] * (rank - len(x.shape.dims)) + list(x.shape.dims)
    py = [1] * (rank - len(y.shape.dims)) + list(y.shape.dims)
    rx: list[int] = []
    ry: list[int] = []
    for axis, (a, b) in enumerate(zip(px, py)):
        if a == 1 and b != 1:
            rx.append(axis)
        elif b == 1 and a != 1:
            ry.append(axis)
        elif a is None or b is None:
            return None
    return rx, ry


def _sum_to(grad: Tensor | None, axes: list[int] | Tensor, shape: Tensor) -> Tensor | None:
    if grad is None:
        return None
    if isinstance(axes, list):
        summed = math_ops.reduce_sum(grad, axis=axes, keepdims=True)
    else:
        summed = shape_ops.reduce_sum(grad, axes, keepdims=True)
    return array_ops.reshape(summed, shape)


def keep_reduced_dims(op: Operation, value: Tensor) -> Tensor:
    """``value`` (shaped like the reduction ``op``'s output) with the reduced dimensions put
    back as size 1, so it broadcasts against the reduction's input."""
    if op.attrs["keepdims"]:
        return value
    x, axis = op.inputs[0], op.attrs["axis"]
    rank = x.shape.ndims
    if axis is None:
        # A full reduction gives a scalar, which broadcasts against any input as it is.
        return value
    if rank is None:
        # Only the run knows which dimensions negative axes name.
        return shape_ops.reshape(value, shape_ops.reduced_shape(shape_ops.shape(x), axis))
    axes = sorted({normalize_axis(a, rank) for a in axis})
    if x.shape.is_fully_defined:
        dims = x.shape.as_list()
        return array_ops.reshape(value, [1 if i in axes else d for i, d in enumerate(dims)])
    for a in axes:  # ascending, so each insertion lands where the reduction removed it
        value = array_ops.expand_dims(value, a)
    return value
