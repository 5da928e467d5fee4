"""Gradients around checkpoint ops (TF's io_ops.py and array_grad.py)."""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import not_differentiable, register_gradient

not_differentiable("SaveV2", "RestoreV2")


@register_gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    """Its default flows through unchanged, as through an Identity."""
    return [grad]
