"""Gradients of Switch and Merge, as TensorFlow builds them (control_flow_grad.py).

In a while loop (``while_grad``): a loop variable's Merge gets a Switch on the backward loop's
condition; its Switch is reached twice, first from its Exit (a Merge, ``b_switch``, of the
gradient entering the backward loop) then from the body (that Merge's back edge). In a cond:
a Merge's gradient is a Switch of the incoming gradient on the cond's predicate
(``<merge>_grad/cond_grad``): it reaches only the branch that ran. A Switch's gradient merges
the gradients of its two outputs (``<switch>_grad/cond_grad``); the output its branch did not
use gets zeros made only when the other branch runs (``zeros_for_switch``).
"""

from __future__ import annotations

from placeviz.graph.control_flow import merge, switch, switch_ref_or_tensor
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads.registry import register_gradient
from placeviz.graph.ops import array_ops, shape_ops, state_ops
from placeviz.graph.ops.control_flow_ops import SWITCH_TYPES
from placeviz.graph.while_loop import WhileContext, add_next_and_back_edge, output_context


def _cond_context(op: Operation) -> object:
    context = op._control_flow_context
    if context is None:
        raise LookupError(
            f"No gradient for '{op.name}' ({op.type}, created at {op.source}) outside a cond: "
            "placeviz differentiates the Switch and Merge ops pv.cond builds"
        )
    return context


def _merge_grad(op: Operation, grad: Tensor, _index_grad: Tensor | None) -> list[Tensor | None]:
    building = op.graph._control_flow_context
    if isinstance(output_context(op.inputs[0].op), WhileContext):
        return list(switch_ref_or_tensor(grad, building.pivot))
    context = _cond_context(op.inputs[0].op)
    pred = context.pred  # type: ignore[attr-defined]
    grad_state = getattr(building, "grad_state", None)
    if grad_state is not None:  # a cond in a loop's body: its predicate from a stack
        real_pred = grad_state.history_map.get(pred)
        if real_pred is None:
            backward = grad_state.grad_context
            backward.exit()
            history = grad_state.add_forward_accumulator(pred)
            backward.enter()
            real_pred = grad_state.add_backprop_accumulated_value(history, pred)
            grad_state.history_map[pred] = real_pred
        pred = real_pred
    false_grad, true_grad = switch_ref_or_tensor(grad, pred, name="cond_grad")
    return [false_grad, true_grad]


register_gradient("Merge")(_merge_grad)
register_gradient("RefMerge")(_merge_grad)


def _switch_grad(op: Operation, false_grad: Tensor | None, true_grad: Tensor | None) -> list:
    if isinstance(op._control_flow_context, WhileContext):
        switch_map = op.graph._control_flow_context.grad_state.switch_map
        merged = switch_map.get(op)
        if merged is not None:  # reached again from the body: the back edge
            if true_grad is not None:
                add_next_and_back_edge(merged, true_grad, enforce_shape_invariant=False)
            return [None, None]
        if false_grad is not None:  # reached from the Exit
            merged = merge([false_grad, false_grad], name="b_switch")[0]
            switch_map[op] = merged
            return [merged, None]
        return [None, None]
    context = _cond_context(op)
    grads = (false_grad, true_grad)
    if grads[1 - context.branch] is None:  # type: ignore[attr-defined]
        return [None, None]
    return [merge(grads, name="cond_grad")[0], None]  # type: ignore[arg-type]


register_gradient("Switch")(_switch_grad)
register_gradient("RefSwitch")(_switch_grad)


def zeros_like_output(op: Operation, index: int) -> Tensor:
    """TF's ``ZerosLike``: the zero gradient of an output no y depends on."""
    if op.type in SWITCH_TYPES:
        return zeros_for_switch(op, index)
    return array_ops.zeros_like(op.outputs[index], optimize=False)


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
