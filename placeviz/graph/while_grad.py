"""The gradient of a while loop, as TensorFlow 1 builds it (control_flow_state.py).

Each forward loop the gradient crosses gets a ``GradLoopState``: a counter loop variable in the
forward loop (``f_count``) and a backward loop (a ``WhileContext`` with this state) whose
condition counts that many iterations down (``b_count``). A forward value a gradient function
reads in the backward loop is pushed onto a stack (``f_acc``, a ``StackV2`` made outside the
loop) by ``StackPushV2`` in each forward iteration and popped by ``StackPopV2`` in the matching
backward iteration; a value from outside the forward loop enters the backward loop as it is, a
constant is made again. The backward pass itself (``gradients.py``) runs over the loops' Exit,
Switch, Merge, NextIteration and Enter ops with their gradients (below and
``grads/control_flow_grad.py``): an Exit's gradient enters the backward loop (``b_exit``), a
loop variable's Switch gets a Merge (``b_switch``) whose back edge is the body's gradient, and
a value read from outside the loop has its gradient summed over the iterations (``b_acc``).
"""

from __future__ import annotations

from typing import Any

from placeviz import dtypes
from placeviz.graph.control_flow import CondContext, switch_ref_or_tensor
from placeviz.graph.core import Operation, Tensor
from placeviz.graph.grads import control_flow_grad
from placeviz.graph.grads.registry import register_gradient
from placeviz.graph.ops import array_ops, shape_ops, stack_ops
from placeviz.graph.ops._build import make_op
from placeviz.graph.ops.constant_op import constant
from placeviz.graph.ops.control_flow_ops import SWITCH_TYPES
from placeviz.graph.ops.shape_ops import constant_value
from placeviz.graph.while_loop import (
    WhileContext,
    enter,
    is_constant_enter,
    next_iteration,
    output_context,
    while_context_of,
)


def is_loop_exit(op: Operation) -> bool:
    return op.type in ("Exit", "RefExit")


def is_loop_switch(op: Operation) -> bool:
    """A loop variable's Switch (on its loop's condition), not a cond's inside a loop body."""
    context = op._control_flow_context
    return (
        op.type in SWITCH_TYPES
        and isinstance(context, WhileContext)
        and op.inputs[1] is context.pivot
    )


def _loop_constant_enter(value: Tensor) -> Operation | None:
    """TF's ``GetLoopConstantEnter``: the constant Enter ``value`` passes on, if any."""
    op = value.op
    while op.type in ("Switch", "RefSwitch", "Identity", "RefIdentity"):
        op = op.inputs[0].op
    return op if is_constant_enter(op) else None


def is_trainable(tensor: Tensor) -> bool:
    """TF's ``IsTrainable``: float outputs get a zero gradient when none reached them."""
    return tensor.dtype.base_dtype.is_floating


class GradLoopState:
    """One forward loop's gradient: its counters, its backward loop, the stacks of the values
    the backward loop reads (``history_map``: forward value -> its value there) and the Merge
    made for each loop Switch (``switch_map``)."""

    def __init__(self, forward: WhileContext, outer_grad_state: GradLoopState | None) -> None:
        self.outer_grad_state = outer_grad_state
        self.forward = forward
        self.history_map: dict[Tensor, Tensor] = {}
        self.switch_map: dict[Operation, Tensor] = {}
        self.unused_exits: list[Tensor] = []
        self.deferred_exits: list[Tensor] = []
        self.forward_loop_exits = list(forward.exits)
        self.pending_exits_count = len(forward.exits)
        self._forward_sync: Operation | None = None
        self._grad_sync: Operation | None = None
        outer_forward = outer_grad_state.forward if outer_grad_state else forward.outer
        if outer_forward is not None:
            outer_forward.enter()
        count, self.forward_index = forward.add_forward_loop_counter(outer_grad_state)
        if outer_forward is not None:
            outer_forward.exit()
        if outer_grad_state is not None:
            outer_forward._values.add(count)
            history_count = outer_grad_state.add_forward_accumulator(count)
            outer_grad = outer_grad_state.grad_context
            outer_grad.enter()
            self.grad_context = self._backward_context()
            real_count = outer_grad_state.add_backprop_accumulated_value(history_count, count)
            self.grad_index = self.grad_context.add_backprop_loop_counter(
                real_count, outer_grad_state
            )
            outer_grad.exit()
        else:
            if outer_forward is not None:
                outer_forward.enter()
            self.grad_context = self._backward_context()
            self.grad_index = self.grad_context.add_backprop_loop_counter(count, None)
            if outer_forward is not None:
                outer_forward.exit()

    def _backward_context(self) -> WhileContext:
        forward = self.forward
        return WhileContext(
            forward.maximum_iterations,
            forward.parallel_iterations,
            forward.back_prop,
            forward.swap_memory,
            grad_state=self,
        )

    @property
    def forward_sync(self) -> Operation:
        """A trigger the forward counter waits for: it keeps the pushes of a value made in a
        cond in iteration order."""
        if self._forward_sync is None:
            with self.forward.graph.control_dependencies(None):
                self._forward_sync = stack_ops.control_trigger("f_sync")
            self._forward_sync._control_flow_context = self.forward
            self.forward_index.op._add_control_input(self._forward_sync)
        return self._forward_sync

    @property
    def grad_sync(self) -> Operation:
        """A trigger the backward counter waits for: it keeps the pops in iteration order."""
        if self._grad_sync is None:
            with self.forward.graph.control_dependencies(None):
                self._grad_sync = stack_ops.control_trigger("b_sync")
            self._grad_sync._control_flow_context = self.grad_context
            self.grad_index.op._add_control_input(self._grad_sync)
        return self._grad_sync

    def add_forward_accumulator(self, value: Tensor, dead_branch: bool = False) -> Tensor:
        """TF's ``AddForwardAccumulator``: a stack (made outside the loop, with ``value``) that
        the forward body pushes ``value`` onto each iteration, after the counter's increment
        and before its next iteration."""
        graph = value.graph
        current = graph._control_flow_context
        with graph.control_dependencies(None):
            if current is not None:
                current.enter()
            with graph.colocate_with(value.op):
                max_size = constant(-1, dtypes.int32)
                acc = stack_ops.stack(max_size, value.dtype.base_dtype, "f_acc")
            if current is not None:
                current.exit()
            entered = self.forward.add_value(acc)
            swap = self.forward.swap_memory
            value_context = output_context(value.op)
            if value_context is self.forward:
                self.forward.enter()
                push = stack_ops.stack_push(entered, value, swap)
                self.forward.exit()
                self.forward_index.op._add_control_input(push.op)
            else:
                if not isinstance(value_context, CondContext):
                    raise TypeError(f"value_ctxt is not a CondContext: {value_context}")
                if dead_branch:  # the zeros of the branch not taken: pushed behind its Switch
                    value_context.outer.enter()
                    push = stack_ops.stack_push(entered, value, swap)
                    value_context.outer.exit()
                    push.op._control_flow_context = value_context
                else:
                    value_context.enter()
                    push = stack_ops.stack_push(entered, value, swap)
                    value_context.exit()
                self.forward_sync._add_control_input(push.op)
            push.op._add_control_input(self.forward_index.op.inputs[0].op)
        return acc

    def add_backprop_accumulated_value(
        self, history: Tensor, value: Tensor, dead_branch: bool = False
    ) -> Tensor:
        """TF's ``AddBackpropAccumulatedValue``: ``value`` popped from its stack ``history`` in
        the backward loop (behind the backward cond's Switch for a value made in a cond)."""
        history_context = history.op._control_flow_context
        cond_context = None
        value_context = value.op._control_flow_context
        while value_context is not None and value_context is not history_context:
            if isinstance(value_context, CondContext):
                cond_context = value_context
                break
            value_context = value_context.outer
        graph = value.graph
        with graph.control_dependencies(None):
            self.grad_context.enter()
            if cond_context is not None:
                state: GradLoopState | None = self
                pred = None
                while pred is None and state is not None:
                    pred = state.history_map.get(cond_context.pred)
                    state = state.outer_grad_state
                if pred is None:
                    pred = cond_context.pred
                branch = (1 - cond_context.branch) if dead_branch else cond_context.branch
                history = switch_ref_or_tensor(history, pred)[branch]
            pop = stack_ops.stack_pop(history, value.dtype.base_dtype)
            pop.set_shape(value.shape)
            self.grad_context.exit()
        if self.grad_context.parallel_iterations > 1:
            self.grad_sync._add_control_input(pop.op)
        return pop

    def get_real_value(self, value: Tensor) -> Tensor:
        """TF's ``GetRealValue``: a forward value as the backward loop reads it (popped from
        its stack, entered from outside the loops, or a constant made again)."""
        real = self.history_map.get(value)
        if real is not None:
            return real
        current, state = value, self
        history = None
        while True:
            enter_op = _loop_constant_enter(current)
            if enter_op is not None:
                current = enter_op.inputs[0]
                state = state.outer_grad_state  # type: ignore[assignment]
                if state is None:
                    real = self.grad_context.add_value(current)
                    break
            elif current.op.type == "Const":
                real = constant(constant_value(current), dtype=current.dtype.base_dtype)
                break
            else:
                self.grad_context.exit()
                history = state.add_forward_accumulator(current)
                self.grad_context.enter()
                break
        if real is None:
            assert history is not None
            real = state.add_backprop_accumulated_value(history, current)
            if state is not self:
                real = self.grad_context.add_value(real)
        self.history_map[value] = real
        return real


class ControlFlowState:
    """The gradient's state of every forward loop one ``gradients`` call crosses."""

    def __init__(self) -> None:
        self._map: dict[WhileContext, GradLoopState] = {}

    def get_grad_state(self, op: Operation, before: bool) -> GradLoopState | None:
        if before and is_loop_exit(op):  # an Exit's gradients are summed outside its loop
            forward = while_context_of(op._control_flow_context.outer)
        else:
            forward = while_context_of(op._control_flow_context)
        return self._map.get(forward) if forward is not None else None

    def process_unused_loop_exits(
        self, pending: dict[Operation, int], to_ops: set[Operation]
    ) -> list[Tensor]:
        """The exits no y depends on, which a loop whose other exits do gets zeros for; a
        loop's Enter that nothing between the xs and ys reads still waits for its gradient."""
        loop_exits = []
        for grad_state in self._map.values():
            for y in grad_state.forward_loop_exits:
                if pending[y.op] == 0:
                    grad_state.pending_exits_count -= 1
                    if y.op not in to_ops:
                        grad_state.unused_exits.append(y)
                    if grad_state.pending_exits_count == 0:
                        loop_exits.extend(grad_state.unused_exits)
            for y in grad_state.forward.enters:
                if pending[y.op] == 0:
                    pending[y.op] = 1
        return loop_exits

    def enter_grad_while_context(self, op: Operation, before: bool) -> None:
        grad_state = self.get_grad_state(op, before)
        if grad_state is not None:
            grad_state.grad_context.enter()

    def exit_grad_while_context(self, op: Operation, before: bool) -> None:
        grad_state = self.get_grad_state(op, before)
        if grad_state is not None:
            grad_state.grad_context.exit()

    def add_while_context(self, op: Operation, between: dict[Operation, None]) -> None:
        """The state of the loop ``op`` (an Exit) leaves, made once; all its exits are then
        between the xs and ys."""
        forward = while_context_of(op._control_flow_context)
        assert forward is not None
        if forward in self._map:
            return
        outer_forward = while_context_of(forward.outer)
        outer_grad_state = self._map.get(outer_forward) if outer_forward is not None else None
        grad_state = GradLoopState(forward, outer_grad_state)
        self._map[forward] = grad_state
        for loop_exit in grad_state.forward_loop_exits:
            between.setdefault(loop_exit.op, None)

    def zeros_like_for_exit(self, value: Tensor) -> Tensor:
        """TF's ``ZerosLikeForExit``: the zero gradient of an exit no y depends on."""
        forward = value.op._control_flow_context
        outer_forward = while_context_of(forward.outer)
        outer_grad_state = self._map.get(outer_forward) if outer_forward is not None else None
        shape = value.shape
        dtype = value.dtype.base_dtype
        if outer_grad_state is None:
            if shape.is_fully_defined:
                return array_ops.zeros(shape.as_list(), dtype)
            return array_ops.zeros_like(value, optimize=False)
        if shape.is_fully_defined:
            outer_grad_state.grad_context.enter()
            result = array_ops.zeros(shape.as_list(), dtype)
            outer_grad_state.grad_context.exit()
            return result
        forward.outer.enter()
        zeros_shape = shape_ops.shape(value, optimize=False)
        forward.outer.exit()
        history = outer_grad_state.add_forward_accumulator(zeros_shape)
        outer_grad_state.grad_context.enter()
        real_shape = outer_grad_state.add_backprop_accumulated_value(history, zeros_shape)
        result = array_ops.zeros(real_shape, dtype)
        outer_grad_state.grad_context.exit()
        return result

    def zeros_like_v1_while_loop(self, op: Operation, index: int) -> Tensor | None:
        """TF's ``ZerosLikeV1WhileLoop``: the zero gradient of an output no y depends on,
        made in the backward loop (its shape from a stack when not known statically)."""
        if is_loop_switch(op):
            return None
        dead_branch = op.type in SWITCH_TYPES
        forward = while_context_of(op._control_flow_context)
        grad_state = self._map.get(forward) if forward is not None else None
        if grad_state is None:
            return control_flow_grad.zeros_like_output(op, index)
        context = op._control_flow_context
        value = op.outputs[index]
        dtype = value.dtype.base_dtype
        if value.shape.is_fully_defined:
            result = constant(0, dtype, shape=value.shape.as_list())
            if dead_branch:
                pred = grad_state.history_map.get(context.pred)
                result = switch_ref_or_tensor(result, pred)[1 - context.branch]
            return result
        if dead_branch:
            context.outer.enter()
            switched = switch_ref_or_tensor(op.inputs[0], context.pred)[1 - context.branch]
            zeros_shape = shape_ops.shape(switched, optimize=False)
            context.outer.exit()
            switched.op._control_flow_context = context
            zeros_shape.op._control_flow_context = context
        else:
            context.enter()
            zeros_shape = shape_ops.shape(value, optimize=False)
            context.exit()
        grad_state.grad_context.exit()
        history = grad_state.add_forward_accumulator(zeros_shape, dead_branch=dead_branch)
        grad_state.grad_context.enter()
        real_shape = grad_state.add_backprop_accumulated_value(history, zeros_shape, dead_branch)
        return array_ops.zeros(real_shape, dtype)

    def post_processing(self) -> None:
        """A loop variable whose next value does not depend on it gets a zero gradient for
        the following backward iteration (its b_switch Merge read the b_exit twice)."""
        for grad_state in self._map.values():
            for merged in grad_state.switch_map.values():
                first, second = merged.op.inputs[0], merged.op.inputs[1]
                if first is not second:
                    continue
                dtype, shape = first.dtype.base_dtype, first.shape
                context = grad_state.grad_context
                if shape.is_fully_defined:
                    context.enter()
                    following = next_iteration(constant(0, dtype, shape=shape.as_list()))
                    context.exit()
                else:
                    outer = context.outer
                    if outer is not None:
                        outer.enter()
                    zeros = array_ops.zeros(
                        shape_ops.shape(first.op.inputs[0], optimize=False), dtype
                    )
                    if outer is not None:
                        outer.exit()
                    context.enter()
                    following = next_iteration(zeros)
                    context.exit()
                merged.op._update_input(1, following)


def maybe_create_control_flow_state(
    between: dict[Operation, None], colocate: bool
) -> ControlFlowState | None:
    """The state of the loops whose exits are between the xs and ys (None: no loop)."""
    state = None
    for op in list(between):
        if is_loop_exit(op):
            if state is None:
                state = ControlFlowState()
            if colocate:
                with op.graph.colocate_with(op, ignore_existing=True):
                    state.add_while_context(op, between)
            else:
                state.add_while_context(op, between)
    return state


# -- the gradients of a loop's own ops -------------------------------------------------------
@register_gradient("Exit")
def _exit_grad(op: Operation, grad: Tensor) -> list[Tensor | None]:
    """The gradient enters the backward loop (``b_exit``)."""
    context = op.graph._control_flow_context
    if not context.back_prop:
        return [None]
    if op._control_flow_context.grad_state is not None:
        raise TypeError("Second-order gradient for while loops not supported.")
    context._values.add(grad)
    context.enter()
    result = enter(grad, context, is_constant=False, name="b_exit")
    context.enters.append(result)
    context.exit()
    return [result]


register_gradient("RefExit")(_exit_grad)


@register_gradient("NextIteration")
def _next_iteration_grad(op: Operation, grad: Tensor) -> list[Tensor]:
    """The backward loop's NextIteration is made by the Switch's gradient."""
    return [grad]


register_gradient("RefNextIteration")(_next_iteration_grad)


@register_gradient("Enter")
def _enter_grad(op: Operation, grad: Tensor) -> list[Tensor]:
    """A loop variable's gradient leaves the backward loop (an Exit); a value the body read
    from outside has its gradients summed over the iterations (``b_acc``)."""
    context = op.graph._control_flow_context
    if context is None or not context.back_prop or context.grad_state is None:
        return [grad]
    if op.attrs.get("is_constant"):
        return [context.add_backprop_accumulator(op, grad)]
    with op.graph.name_scope("Exit") as scope:
        result = make_op("Exit", [grad], scope).outputs[0]
    context.exits.append(result)
    context.exit_result([result])
    return [result]


register_gradient("RefEnter")(_enter_grad)


@register_gradient("LoopCond")
def _loop_cond_grad(op: Operation, grad: Any) -> list[None]:
    """No gradient reaches a loop's predicate."""
    return [None]
