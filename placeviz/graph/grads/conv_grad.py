"""Gradients of convolution and pooling (TF's nn_grad.py): each is the op's backprop op with the
forward op's attrs, its shape operands read as TF reads them (ShapeN for Conv2D, Shape for the
rest)."""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import not_differentiable, register_gradient
from placeviz.graph.ops import conv_ops, shape_ops

Grads = list[Tensor | None]


@register_gradient("Conv2D")
def _conv2d_grad(op: Operation, grad: Tensor) -> Grads:
    x, w = op.inputs
    x_shape, w_shape = conv_ops.shape_n([x, w])
    return [
        conv_ops.backprop("Conv2DBackpropInput", [x_shape, w, grad], op.attrs),
        conv_ops.backprop("Conv2DBackpropFilter", [x, w_shape, grad], op.attrs),
    ]


@register_gradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op: Operation, grad: Tensor) -> Grads:
    """conv2d_transpose's: the filter's gradient as Conv2D's, the value's a Conv2D of ``grad``."""
    _, w, dy = op.inputs
    w_shape = shape_ops.shape(w, optimize=True)
    return [
        None,
        conv_ops.backprop("Conv2DBackpropFilter", [grad, w_shape, dy], op.attrs),
        conv_ops.backprop("Conv2D", [grad, w], op.attrs),
    ]


@register_gradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op: Operation, grad: Tensor) -> Grads:
    x, _, dy = op.inputs
    x_shape = shape_ops.shape(x, optimize=True)
    return [
        conv_ops.backprop("Conv2DBackpropInput", [x_shape, grad, dy], op.attrs),
        None,
        conv_ops.backprop("Conv2D", [x, grad], op.attrs),
    ]


@register_gradient("DepthwiseConv2dNative")
def _depthwise_grad(op: Operation, grad: Tensor) -> Grads:
    x, w = op.inputs
    x_shape = shape_ops.shape(x, optimize=True)
    dx = conv_ops.backprop("DepthwiseConv2dNativeBackpropInput", [x_shape, w, grad], op.attrs)
    w_shape = shape_ops.shape(w, optimize=True)
    dw = conv_ops.backprop("DepthwiseConv2dNativeBackpropFilter", [x, w_shape, grad], op.attrs)
    return [dx, dw]


@register_gradient("MaxPool")
def _max_pool_grad(op: Operation, grad: Tensor) -> Grads:
    return [conv_ops.backprop("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], op.attrs)]


@register_gradient("AvgPool")
def _avg_pool_grad(op: Operation, grad: Tensor) -> Grads:
    shape = shape_ops.shape(op.inputs[0], optimize=True)
    return [conv_ops.backprop("AvgPoolGrad", [shape, grad], op.attrs)]


@register_gradient("LRN")
def _lrn_grad(op: Operation, grad: Tensor) -> Grads:
    return [conv_ops.backprop("LRNGrad", [grad, op.inputs[0], op.outputs[0]], op.attrs)]


@register_gradient("SpaceToBatchND")
def _space_to_batch_grad(op: Operation, grad: Tensor) -> Grads:
    return [conv_ops.batch_to_space_nd(grad, op.inputs[1], op.inputs[2]), None, None]


@register_gradient("BatchToSpaceND")
def _batch_to_space_grad(op: Operation, grad: Tensor) -> Grads:
    return [conv_ops.space_to_batch_nd(grad, op.inputs[1], op.inputs[2]), None, None]


not_differentiable("ShapeN")
