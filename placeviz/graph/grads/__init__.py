"""Gradient functions per op type; importing the package registers all of them."""

from placeviz.graph.grads import (
    activation_grad,
    array_grad,
    batch_norm_grad,
    control_flow_grad,
    conv_grad,
    io_grad,
    linalg_grad,
    math_grad,
    nn_grad,
    reverse_grad,
    selection_grad,
    tensor_array_grad,
    train_grad,
)
from placeviz.graph.grads.registry import (
    GradientFunction,
    gradient_function,
    not_differentiable,
    register_gradient,
    registered_types,
)

__all__ = [
    "GradientFunction",
    "activation_grad",
    "array_grad",
    "batch_norm_grad",
    "control_flow_grad",
    "conv_grad",
    "gradient_function",
    "io_grad",
    "linalg_grad",
    "math_grad",
    "nn_grad",
    "not_differentiable",
    "register_gradient",
    "registered_types",
    "reverse_grad",
    "selection_grad",
    "tensor_array_grad",
    "train_grad",
]
