"""Gradients of a cond's Switch and Merge, as TensorFlow builds them (control_flow_grad.py).

A Merge's gradient is a Switch of the incoming gradient on the cond's predicate
(``<merge>_grad/cond_grad``): it reaches only the branch that ran. A Switch's gradient merges
the gradients of its two outputs (``<switch>_grad/cond_grad``); the output its branch did not
use gets zeros made only when the other branch runs (``zeros_for_switch``).
"""

from __future__ import annotations

from placeviz.graph.control_flow import merge, switch, switch_ref_or_tensor
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import register_gradient
from placeviz.graph.ops import array_ops, shape_ops, state_ops


def _cond_context(op: Operation) -> object:
    context = op._control_flow_context
    if context is None:
        raise LookupError(
            f"No gradient for '{op.name}' ({op.type}, created at {op.source}) outside a cond: "
            "placeviz differentiates the Switch and Merge ops pv.cond builds"
        )
    return context


@register_gradient("Merge")
def _merge_grad(op: Operation, grad: Tensor, _index_grad: Tensor | None) -> list[Tensor | None]:
    context = _cond_context(op.inputs[0].op)
    false_grad, true_grad = switch_ref_or_tensor(grad, context.pred, name="cond_grad")  # type: ignore[attr-defined]
    return [false_grad, true_grad]


def _switch_grad(op: Operation, false_grad: Tensor | None, true_grad: Tensor | None) -> list:
    context = _cond_context(op)
    grads = (false_grad, true_grad)
    if grads[1 - context.branch] is None:  # type: ignore[attr-defined]
        return [None, None]
    return [merge(grads, name="cond_grad")[0], None]  # type: ignore[arg-type]


register_gradient("Switch")(_switch_grad)
register_gradient("RefSwitch")(_switch_grad)


def zeros_for_switch(op: Operation, index: int) -> Tensor:
    """TF's ``ZerosLikeOutsideLoop`` of a Switch's output the branch did not use: zeros shaped
    like the data, made behind a Switch of their own so they exist only when that side runs."""
    context = op._control_flow_context
    value = op.outputs[index]
    if context is None:
        return array_ops.zeros_like(value, optimize=False)
    switched = switch(op.inputs[0], context.pred)[1 - context.branch]
    pivot = state_ops.identity(switched)
    zeros_shape = shape_ops.shape(switched, optimize=False)
    with op.graph.control_dependencies([pivot]):
        return array_ops.zeros(zeros_shape, dtype=value.dtype.base_dtype)
