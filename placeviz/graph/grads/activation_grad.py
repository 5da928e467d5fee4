"""Gradients of the activations and of Rsqrt, Erf, Erfc, Log1p, SquaredDifference, Select and
SelectV2, built with TensorFlow's ops and names (its nn_grad.py and math_grad.py)."""

from __future__ import annotations

import math

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import register_gradient
from placeviz.graph.grads.shapes import reduce_broadcast
from placeviz.graph.ops import array_ops, constant_op, math_ops, nn_ops

Grads = list[Tensor | None]


@register_gradient("Rsqrt")
def _rsqrt_grad(op: Operation, grad: Tensor) -> Grads:
    return [math_ops.unary_grad("RsqrtGrad", op.outputs[0], grad)]


@register_gradient("Softplus")
def _softplus_grad(op: Operation, grad: Tensor) -> Grads:
    """TF's: the derivative of softplus is the sigmoid of its input (Sigmoid, mul)."""
    return [math_ops.multiply(grad, math_ops.sigmoid(op.inputs[0]), name="mul")]


@register_gradient("Elu")
def _elu_grad(op: Operation, grad: Tensor) -> Grads:
    return [nn_ops.activation_grad("EluGrad", grad, op.outputs[0])]


@register_gradient("Selu")
def _selu_grad(op: Operation, grad: Tensor) -> Grads:
    return [nn_ops.activation_grad("SeluGrad", grad, op.outputs[0])]


@register_gradient("Relu6")
def _relu6_grad(op: Operation, grad: Tensor) -> Grads:
    return [nn_ops.activation_grad("Relu6Grad", grad, op.outputs[0])]


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op: Operation, grad: Tensor) -> Grads:
    alpha = op.attrs["alpha"]
    return [nn_ops.activation_grad("LeakyReluGrad", grad, op.inputs[0], alpha=alpha)]


def _gaussian_grad(op: Operation, grad: Tensor, factor: float) -> Grads:
    """Erf's and Erfc's: ``grad * factor * exp(-x²)``, the Square held back until ``grad``
    exists, as TF builds them (Const, mul, Square, Neg, Exp, mul_1)."""
    x = op.inputs[0]
    scale = constant_op.constant(factor, dtype=grad.dtype)
    with op.graph.control_dependencies([grad]):
        scaled = math_ops.multiply(grad, scale, name="mul")
        return [math_ops.multiply(scaled, math_ops.exp(-math_ops.square(x)), name="mul")]


@register_gradient("Erf")
def _erf_grad(op: Operation, grad: Tensor) -> Grads:
    return _gaussian_grad(op, grad, 2 / math.sqrt(math.pi))


@register_gradient("Erfc")
def _erfc_grad(op: Operation, grad: Tensor) -> Grads:
    return _gaussian_grad(op, grad, -2 / math.sqrt(math.pi))


@register_gradient("Log1p")
def _log1p_grad(op: Operation, grad: Tensor) -> Grads:
    with op.graph.control_dependencies([grad]):  # TF's
        return [grad * math_ops.reciprocal(1 + op.inputs[0])]


@register_gradient("Select")
def _select_grad(op: Operation, grad: Tensor) -> Grads:
    """TF1's Select (the logistic loss picks |x| with it): the gradient goes to the branch
    each element came from, zeros to the other."""
    condition, x = op.inputs[0], op.inputs[1]
    zeros = array_ops.zeros_like(x)
    return [None, math_ops.select(condition, grad, zeros), math_ops.select(condition, zeros, grad)]


@register_gradient("SelectV2")
def _select_v2_grad(op: Operation, grad: Tensor) -> Grads:
    """TF2's where (dropout keeps elements with it): each branch's share of ``grad``, summed
    back over the dimensions the branch was broadcast along."""
    condition, x, y = op.inputs
    zeros = array_ops.zeros([], dtype=grad.dtype.base_dtype)
    gx = math_ops.where_v2(condition, grad, zeros)
    gy = math_ops.where_v2(condition, zeros, grad)
    out = op.outputs[0]
    return [None, reduce_broadcast(x, out, gx, None)[0], reduce_broadcast(y, out, gy, None)[0]]


@register_gradient("SquaredDifference")
def _squared_difference_grad(op: Operation, grad: Tensor) -> Grads:
    """d(x - y)² = 2 (x - y) dx - 2 (x - y) dy, summed back over broadcast dimensions."""
    x, y = op.inputs
    with op.graph.control_dependencies([grad]):  # TF's scalar_mul(2.0, grad) * (x - y)
        two = constant_op.constant(2.0, dtype=grad.dtype, name="scalar")
        x_grad = math_ops.multiply(two, grad, name="Mul") * (x - y)
    if x.shape.is_fully_defined and x.shape == y.shape == grad.shape:
        return [x_grad, -x_grad]
    return list(reduce_broadcast(x, y, x_grad, -x_grad))


# -- second derivatives: gradients of the fused gradient ops (gradients of gradients) -----------
def _below_zero_grad(op: Operation, grad: Tensor) -> Tensor:
    """EluGrad's and SeluGrad's gradient with respect to the forward output: where it was
    negative the backprop was ``gradients * (y + c)``, so d/dy is ``grad * gradients``."""
    y = op.inputs[1]
    negative = y < 0.0
    return math_ops.select(negative, grad * op.inputs[0], array_ops.zeros_like(y))


@register_gradient("EluGrad")
def _elu_grad_grad(op: Operation, grad: Tensor) -> Grads:
    backprop = nn_ops.activation_grad("EluGrad", grad, op.inputs[1])
    return [backprop, _below_zero_grad(op, grad)]


@register_gradient("SeluGrad")
def _selu_grad_grad(op: Operation, grad: Tensor) -> Grads:
    backprop = nn_ops.activation_grad("SeluGrad", grad, op.inputs[1])
    return [backprop, _below_zero_grad(op, grad)]


@register_gradient("Relu6Grad")
def _relu6_grad_grad(op: Operation, grad: Tensor) -> Grads:
    x = op.inputs[1]
    return [nn_ops.activation_grad("Relu6Grad", grad, x), array_ops.zeros_like(x)]


@register_gradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op: Operation, grad: Tensor) -> Grads:
    x, alpha = op.inputs[1], op.attrs["alpha"]
    backprop = nn_ops.activation_grad("LeakyReluGrad", grad, x, alpha=alpha)
    return [backprop, array_ops.zeros_like(x)]


@register_gradient("RsqrtGrad")
def _rsqrt_grad_grad(op: Operation, grad: Tensor) -> Grads:
    """RsqrtGrad(y, dy) = -dy y³ / 2: d/dy = -1.5 dy y², d/d(dy) = RsqrtGrad(y, grad)."""
    y, dy = op.inputs
    with op.graph.control_dependencies([grad]):  # TF's
        grad_y = -1.5 * grad * dy * math_ops.square(y)
        return [grad_y, math_ops.unary_grad("RsqrtGrad", y, grad)]
