"""Which function builds each op type's gradient: TF's ``RegisterGradient``/``NotDifferentiable``.

Kept apart from ``OpDef`` on purpose: a gradient function builds ops of other families (Mul's
needs Shape, Sum and Reshape; GatherV2's needs UnsortedSegmentSum), so declaring gradients next
to their ops would make the op modules import each other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from placeviz.graph.core import Operation, Tensor

# fn(op, *output_grads) -> one gradient (or None) per input of op.
GradientFunction = Callable[..., Sequence["Tensor | None"]]

_GRADIENTS: dict[str, GradientFunction | None] = {}


def register_gradient(op_type: str) -> Callable[[GradientFunction], GradientFunction]:
    """Decorator: ``fn`` builds the gradient of every ``op_type`` op."""

    def decorate(fn: GradientFunction) -> GradientFunction:
        _register(op_type, fn)
        return fn

    return decorate


def first_input_only(op: Operation, grad: Tensor) -> list[Tensor | None]:
    """``grad`` for the op's first input and none for the rest (a reduction's axes, a Reshape's
    shape, a Transpose's permutation: integers that no gradient flows into)."""
    return [grad, *[None] * (len(op.inputs) - 1)]


def not_differentiable(*op_types: str) -> None:
    """These op types pass no gradient to their inputs (their input gradients are None)."""
    for op_type in op_types:
        _register(op_type, None)


def _register(op_type: str, fn: GradientFunction | None) -> None:
    if op_type in _GRADIENTS:
        raise ValueError(f"A gradient for op type {op_type!r} is already registered")
    _GRADIENTS[op_type] = fn


def gradient_function(op: Operation) -> GradientFunction | None:
    """The op's gradient function, None for a non-differentiable op; LookupError if unknown."""
    try:
        return _GRADIENTS[op.type]
    except KeyError:
        raise LookupError(
            f"No gradient defined for operation '{op.name}' (op type: {op.type}), created at "
            f"{op.source}"
        ) from None


def registered_types() -> dict[str, bool]:
    """Every op type with a registration, mapped to whether it is differentiable."""
    return {op_type: fn is not None for op_type, fn in _GRADIENTS.items()}
