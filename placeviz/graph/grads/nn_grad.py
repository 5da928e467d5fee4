"""Gradients of the activations ``pv.nn`` presents: Relu and Softmax (TF's nn_grad.py)."""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import register_gradient
from placeviz.graph.ops import math_ops, nn_ops

Grads = list[Tensor | None]


@register_gradient("Relu")
def _relu_grad(op: Operation, grad: Tensor) -> Grads:
    return [nn_ops.relu_grad(grad, op.outputs[0])]


@register_gradient("Softmax")
def _softmax_grad(op: Operation, grad: Tensor) -> Grads:
    """dx = (dy - sum(dy * y, axis)) * y along the softmax axis."""
    y = op.outputs[0]
    total = math_ops.reduce_sum(math_ops.multiply(grad, y), axis=op.attrs["axis"], keepdims=True)
    return [math_ops.multiply(math_ops.subtract(grad, total), y)]
