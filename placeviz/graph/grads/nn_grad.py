"""Gradients of the ops ``pv.nn`` presents: activations, losses, BiasAdd (TF's nn_grad.py)."""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import not_differentiable, register_gradient
from placeviz.graph.ops import array_ops, loss_ops, math_ops, nn_ops

Grads = list[Tensor | None]


@register_gradient("Relu")
def _relu_grad(op: Operation, grad: Tensor) -> Grads:
    return [nn_ops.relu_grad(grad, op.outputs[0])]


@register_gradient("Softmax")
def _softmax_grad(op: Operation, grad: Tensor) -> Grads:
    """dx = (dy - sum(dy * y, axis)) * y along the softmax axis."""
    y = op.outputs[0]
    # TF's operators: mul, Sum, sub, mul_1
    product = math_ops.multiply(grad, y, name="mul")
    total = math_ops.reduce_sum(product, axis=op.attrs["axis"], keepdims=True)
    return [math_ops.multiply(math_ops.subtract(grad, total, name="sub"), y, name="mul")]


def _per_row(grad_loss: Tensor, rows: Tensor) -> Tensor:
    """``grad_loss`` (one value per row) times each row of ``rows``."""
    return math_ops.multiply(array_ops.expand_dims(grad_loss, -1), rows, name="mul")  # TF's *


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_cross_entropy_grad(op: Operation, grad_loss: Tensor, grad_backprop: Tensor) -> Grads:
    """d/dlogits = softmax - labels (the op's second output); d/dlabels = -log_softmax."""
    logits_grad = _per_row(grad_loss, op.outputs[1])
    labels_grad = _per_row(grad_loss, math_ops.negative(loss_ops.log_softmax(op.inputs[0])))
    return [logits_grad, labels_grad]


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_cross_entropy_grad(
    op: Operation, grad_loss: Tensor, grad_backprop: Tensor
) -> Grads:
    return [_per_row(grad_loss, op.outputs[1]), None]


@register_gradient("LogSoftmax")
def _log_softmax_grad(op: Operation, grad: Tensor) -> Grads:
    """dx = dy - sum(dy) * softmax(x), the softmax being exp of the op's output."""
    softmax = math_ops.exp(op.outputs[0])  # TF's order and operator names: Exp, Sum, mul, sub
    total = math_ops.reduce_sum(grad, axis=-1, keepdims=True)
    return [math_ops.subtract(grad, math_ops.multiply(total, softmax, name="mul"), name="sub")]


@register_gradient("BiasAdd")
def _bias_add_grad(op: Operation, grad: Tensor) -> Grads:
    return [grad, loss_ops.bias_add_grad(grad, op.attrs.get("data_format", "NHWC"))]


not_differentiable("StopGradient")
