"""Neural-network activations, so the package can present them as ``pv.nn``, and ``ReluGrad``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops._build import make_op, require_dtype, single
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.ops.math_ops import infer_same_shape, relu, sigmoid, tanh
from placeviz.graph.registry import OpDef, OutputSpec, elementwise_cost
from placeviz.graph.shapes import ShapeError, normalize_axis

__all__ = ["relu", "sigmoid", "softmax", "tanh"]


def _infer_softmax(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    logits = inputs[0]
    require_dtype("Softmax", logits.dtype, dtypes.FLOATS)
    rank = logits.shape.ndims
    if rank == 0:
        raise ShapeError("logits must have rank at least 1, but has rank 0")
    normalize_axis(attrs["axis"], rank)
    return single(logits.shape, logits.dtype)


def _softmax_kernel(xp: Any, op: Operation, state: Any) -> Any:
    axis = normalize_axis(op.attrs["axis"], op.inputs[0].shape.ndims)

    def softmax(x: Any) -> Any:
        # Subtracting the max keeps exp from overflowing; the new array is safe to reuse in place.
        shifted = x - x.max(axis=axis, keepdims=True)
        xp.exp(shifted, out=shifted)
        shifted /= shifted.sum(axis=axis, keepdims=True)
        return shifted

    return softmax


registry.register(
    OpDef(
        type="Softmax",
        infer=_infer_softmax,
        kernel=_softmax_kernel,
        # max, subtract, exp (8), sum and divide per element
        cost=lambda op, ins, outs: elementwise_cost(op, ins, outs, flops_per_element=12.0),
        supported={t: frozenset(dtypes.FLOATS) for t in registry.DEVICE_TYPES},
    )
)


def softmax(logits: Any, axis: int = -1, name: str | None = None) -> Tensor:
    """Normalizes along ``axis`` (the last by default) so each slice sums to 1."""
    attrs = {"axis": int(axis)}
    return make_op("Softmax", [convert_to_tensor(logits)], name or "Softmax", attrs).outputs[0]


# -- ReluGrad: the gradient where the features were positive -----------------------------------
def _relu_grad_kernel(xp: Any, op: Operation, state: Any) -> Any:
    zero = xp.asarray(0, dtype=op.outputs[0].dtype.np)
    return lambda gradients, features: xp.where(features > zero, gradients, zero)


registry.register(
    OpDef(
        type="ReluGrad",
        infer=infer_same_shape("ReluGrad", ("gradients", "features")),
        kernel=_relu_grad_kernel,
    )
)


def relu_grad(gradients: Tensor, features: Tensor, name: str | None = None) -> Tensor:
    """TF's ``ReluGrad``: ``gradients`` where ``features > 0``, else 0."""
    return make_op("ReluGrad", [gradients, features], name or "ReluGrad").outputs[0]
