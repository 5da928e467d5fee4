"""Gradients of the reversals, as TF's array_grad.py: the gradient reversed the same way."""

from __future__ import annotations

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import register_gradient
from placeviz.graph.ops.reverse_ops import reverse, reverse_sequence


@register_gradient("ReverseV2")
def _reverse_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    return [reverse(grad, op.inputs[1]), None]


@register_gradient("ReverseSequence")
def _reverse_sequence_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    return [
        reverse_sequence(
            grad,
            op.inputs[1],
            seq_axis=op.attrs["seq_dim"],
            batch_axis=op.attrs["batch_dim"],
        ),
        None,
    ]
