"""Gradient functions per op type; importing the package registers all of them."""

from placeviz.graph.grads import array_grad, math_grad, nn_grad
from placeviz.graph.grads.registry import (
    GradientFunction,
    gradient_function,
    not_differentiable,
    register_gradient,
    registered_types,
)

__all__ = [
    "GradientFunction",
    "array_grad",
    "gradient_function",
    "math_grad",
    "nn_grad",
    "not_differentiable",
    "register_gradient",
    "registered_types",
]
