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


def reshape_like(grad: Tensor, like: Tensor) -> Tensor:
    """``grad`` reshaped to ``like``'s shape (nothing to do when the static shapes agree)."""
    if like.shape.is_fully_defined:
        if grad.shape == like.shape:
            return grad
        return array_ops.reshape(grad, like.shape.as_list())
    return shape_ops.reshape(grad, shape_ops.shape(like))


def broadcast_like(grad: Tensor, like: Tensor) -> Tensor:
    """``grad`` broadcast to ``like``'s shape."""
    if like.shape.is_fully_defined and grad.shape == like.shape:
        return grad
    return shape_ops.broadcast_to(grad, shape_of(like))


def reduce_broadcast(
    x: Tensor, y: Tensor, gx: Tensor | None, gy: Tensor | None
) -> tuple[Tensor | None, Tensor | None]:
    """Sum gradients taken with respect to ``broadcast(x, y)`` back to x's and y's shapes."""
    if x.shape.is_fully_defined and y.shape.is_fully_defined:
        if x.shape == y.shape:
            return gx, gy
        sx, sy = x.shape.as_list(), y.shape.as_list()
        rx, ry = shape_ops.broadcast_gradient_axes(sx, sy)  # type: ignore[arg-type]
        return _static_sum(gx, rx, sx), _static_sum(gy, ry, sy)
    sx, sy = shape_of(x), shape_of(y, name="Shape_1")
    rx, ry = shape_ops.broadcast_gradient_args(sx, sy)
    out_x = None if gx is None else shape_ops.reshape(shape_ops.reduce_sum(gx, rx), sx)
    out_y = None if gy is None else shape_ops.reshape(shape_ops.reduce_sum(gy, ry), sy)
    return out_x, out_y


def _static_sum(grad: Tensor | None, axes: tuple[int, ...], dims: list[int]) -> Tensor | None:
    if grad is None:
        return None
    if axes:
        grad = math_ops.reduce_sum(grad, axis=list(axes))
    return grad if grad.shape == dims else array_ops.reshape(grad, dims)


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
