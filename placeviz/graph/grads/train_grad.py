"""Gradients of the ops training code adds: L2Loss (weight decay, global norms). Floor and Ceil
(staircase and cyclic learning-rate schedules) pass none, as TensorFlow's return None."""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import not_differentiable, register_gradient

not_differentiable("Floor", "Ceil")


@register_gradient("L2Loss")
def _l2_loss_grad(op: Operation, grad: Tensor) -> list[Tensor]:
    """d(sum(x²)/2) = x dy, through ``*`` as TF's (``L2Loss_grad/mul``)."""
    return [op.inputs[0] * grad]
