"""``pv.while_loop``: TensorFlow 1's loop, a frame built from Enter, Merge, LoopCond, Switch,
Identity, NextIteration and Exit (TF's ``WhileContext``).

Each loop variable enters the frame (``while/Enter``), meets its next iteration's value in a
Merge (``while/Merge``), is switched on the loop condition (``while/LoopCond``) into the body
(``while/Identity``) or out of the loop (``while/Exit``); the body's result goes back to the
Merge through ``while/NextIteration``. A value from outside the loop that the body or the
condition reads enters the frame once, as a constant (``<op>/Enter``); an op without inputs
waits on the frame's pivot. The executor runs a frame iteration by iteration
(``placeviz.runtime.frames``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from placeviz import nest
from placeviz.graph.control_flow import (
    assert_same_structure,
    bring_inputs_in,
    merge,
    switch,
    switch_ref_or_tensor,
)
from placeviz.graph.core import Graph, Operation, Tensor, executing_eagerly, get_default_graph
from placeviz.graph.ops import array_ops, math_ops, shape_ops, state_ops
from placeviz.graph.ops._build import make_op
from placeviz.graph.ops.constant_op import constant, convert_to_tensor
from placeviz.graph.ops.control_flow_ops import ENTER_TYPES
from placeviz.graph.shapes import TensorShape, as_shape
from placeviz.graph.tensor_array import TensorArray, carry_tensor_arrays


def output_context(op: Operation) -> Any:
    """TF's ``GetOutputContext``: where the op's outputs are seen (an Exit's: outside its loop)."""
    context = op._control_flow_context
    if context is not None and op.type == "Exit":
        context = context.outer
    return context


def while_context_of(context: Any) -> WhileContext | None:
    while context is not None and not isinstance(context, WhileContext):
        context = context.outer
    return context


class WhileContext:
    """One loop's frame while it is built: its values (an outer value maps to its Enter), its
    pivots, its enters and exits."""

    def __init__(
        self,
        maximum_iterations: Tensor | None,
        parallel_iterations: int,
        back_prop: bool,
        swap_memory: bool = False,
        grad_state: Any = None,
    ):
        self.graph: Graph = get_default_graph()
        self.outer: Any = self.graph._control_flow_context
        self.name = self.graph.unique_name("while_context")
        self.maximum_iterations = maximum_iterations
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        # the gradient's state (while_grad.GradLoopState) when this is a loop's backward loop
        self.grad_state = grad_state
        self._values: set[Tensor] = set()
        self._external: dict[Tensor, Tensor] = {}
        self._entered_from: list[Any] = []  # the contexts enter() left, innermost last
        self.pivot: Tensor | None = None
        self.pivot_for_pred: Tensor | None = None
        self.pivot_for_body: Tensor | None = None
        self.enters: list[Tensor] = []
        self.exits: list[Tensor] = []

    def control_pivot(self) -> Tensor:
        pivot = self.pivot_for_body if self.pivot_for_body is not None else self.pivot_for_pred
        assert pivot is not None
        return pivot

    def enter(self) -> None:
        """As TF's: exit() goes back to the context that was current here (not the outer one)."""
        self._entered_from.append(self.graph._control_flow_context)
        self.graph._control_flow_context = self

    def exit(self) -> None:
        self.graph._control_flow_context = self._entered_from.pop()

    def add_value(self, value: Tensor) -> Tensor:
        """``value`` as seen in the frame: an outer value through its constant Enter."""
        if value not in self._values and value.op._control_flow_context is not self:
            self._values.add(value)
            building = while_context_of(self.graph._control_flow_context)
            if building is not None and building.grad_state is not None:
                forward = while_context_of(output_context(value.op))
                if forward is building.grad_state.forward:  # read from its stack
                    real = building.grad_state.get_real_value(value)
                    self._external[value] = real
                    return real
            result = value
            if self.outer is not None:
                result = self.outer.add_value(value)
            with self.graph.control_dependencies(None):
                entered = enter(result, self, is_constant=True)
            self.graph.prevent_fetching(entered.op)
            self.graph.prevent_feeding(entered)
            entered.op._control_flow_context = self
            self._values.add(entered)
            self._external[value] = entered
            return entered
        return self._external.get(value, value)

    def add_op(self, op: Operation) -> None:
        """TF's ``WhileContext.AddOp``: a backward loop's Shape (Size, Rank) of a forward value
        is made in the forward loop (its result is then read from a stack)."""
        if op.type in ("Shape", "Size", "Rank"):
            building = while_context_of(self.graph._control_flow_context)
            if building is not None and building.grad_state is not None:
                source = op.inputs[0].op._control_flow_context
                if while_context_of(source) is building.grad_state.forward:
                    op._control_flow_context = source
                    if isinstance(source, WhileContext):
                        source._add_op_internal(op)
                    else:
                        source.add_op(op)
                    return
        self._add_op_internal(op)

    def _add_op_internal(self, op: Operation) -> None:
        """TF's ``WhileContext._AddOpInternal``."""
        if not op.inputs:
            internal, external = self._split_control_inputs(op)
            if not internal:
                op._add_control_input(self.control_pivot().op)
        else:
            bring_inputs_in(self, op)
            _, external = self._split_control_inputs(op)
            if not op.control_inputs and all(is_constant_enter(t.op) for t in op.inputs):
                op._add_control_input(self.control_pivot().op)  # runs once per iteration
        self._values.update(op.outputs)
        if external:  # TF pulls outer control inputs in as data, through Identities
            with self.graph.control_dependencies(None):
                self.enter()
                pulled = [state_ops.identity(x.outputs[0]).op for x in external if x.outputs]
                self.exit()
            op._add_control_inputs(pulled)
        if self.outer is not None or op.type != "Exit":
            self.graph.prevent_fetching(op)
            for x in op.outputs:
                self.graph.prevent_feeding(x)

    def _split_control_inputs(self, op: Operation) -> tuple[list[Operation], list[Operation]]:
        """The control inputs from this loop, and those from outside, which the op drops."""
        internal = [c for c in op.control_inputs if while_context_of(output_context(c)) is self]
        if len(internal) != len(op.control_inputs):
            external = [c for c in op.control_inputs if c not in internal]
            op.control_inputs[:] = internal
            self.graph._edges_changed += 1
            return internal, external
        return internal, []

    def build(
        self,
        cond: Callable[..., Any],
        body: Callable[..., Any],
        loop_vars: Sequence[Any],
        invariants: list[TensorShape],
    ) -> tuple[Any, list[Tensor]]:
        """TF's ``_BuildLoop``: the frame, the body's result as the body gave it and the exits."""
        flat = nest.flatten(loop_vars)
        self._values = set(flat)
        real = [self.outer.add_value(x) for x in flat] if self.outer is not None else flat
        enters = []
        with self.graph.control_dependencies(None):
            for value, invariant in zip(real, invariants):
                entered = enter(value, self, is_constant=False, shape=TensorShape(None))
                if not _shape_less_than_or_equal(value.shape, invariant):
                    raise ValueError(
                        f"The shape invariant specified for {value.name} is not compatible with "
                        f"the initial shape of the loop variable. It enters the loop with shape "
                        f"{value.shape}, but the specified shape invariant is {invariant}."
                    )
                entered._shape = invariant  # TF's use_input_shape=False: the invariant's
                self.graph.prevent_feeding(entered)
                enters.append(entered)
        for entered in enters:
            entered.op._control_flow_context = self
        self._values = set(enters)
        self.enters = enters
        merges = [merge([x, x])[0] for x in enters]
        self.pivot_for_pred = merges[0]
        c = convert_to_tensor(cond(*nest.pack_sequence_as(list(loop_vars), merges)))
        self.pivot = make_op("LoopCond", [c], "LoopCond").outputs[0]
        switches = [switch_ref_or_tensor(x, self.pivot) for x in merges]
        for_body = [state_ops.identity(s[1]) for s in switches]
        self.pivot_for_body = for_body[0]
        packed_for_body = nest.pack_sequence_as(list(loop_vars), for_body)
        body_result = body(*packed_for_body)
        if not nest.is_nested(body_result):
            body_result = [body_result]
        assert_same_structure(list(packed_for_body), list(body_result))
        result = [convert_to_tensor(x) for x in nest.flatten(body_result)]
        if len(merges) != len(result):
            raise ValueError(
                "Number of inputs and outputs of 'body' must match 'loop_vars'. Got "
                f"{len(merges)} for the number of inputs/outputs, and {len(result)} for "
                "'loop_vars'."
            )
        for m, v in zip(merges, result):
            add_next_and_back_edge(m, v)
        exits = []
        for s in switches:
            with self.graph.name_scope("Exit") as scope:
                exits.append(make_op("Exit", [s[0]], scope).outputs[0])
        self.exits = exits
        self.exit_result(exits)
        return body_result, exits

    def exit_result(self, exits: Sequence[Tensor]) -> None:
        """TF's ``ExitResult``: the outer frame knows the exits (no Enter for them there)."""
        if self.outer is not None:
            for x in exits:
                self.outer._values.add(x)

    def add_forward_loop_counter(self, outer_grad_state: Any) -> tuple[Tensor, Tensor]:
        """TF's ``AddForwardLoopCounter``: a loop variable ``n`` (``f_count``) that counts the
        iterations, made when the loop's gradient is built; its exit and its next value (which
        the stack pushes of an iteration run before)."""
        n = constant(0, name="f_count")
        if outer_grad_state is not None:
            n.op._add_control_input(outer_grad_state.forward_index.op.inputs[0].op)
        self.enter()
        self._values.add(n)
        enter_n = self._enter_variable(n, "f_count")
        merged = merge([enter_n, enter_n])[0]
        assert self.pivot is not None
        switched = switch(merged, self.pivot)
        index = math_ops.add(switched[1], 1)
        following = next_iteration(index)
        merged.op._update_input(1, following)
        total = make_op("Exit", [switched[0]], "f_count").outputs[0]
        self.exits.append(total)
        self.exit_result([total])
        self.exit()
        return total, following

    def add_backprop_loop_counter(self, count: Tensor, outer_grad_state: Any) -> Tensor:
        """TF's ``AddBackpropLoopCounter``: this backward loop's condition, ``count`` (the
        forward loop's trip count) down to 0 (``b_count``); its next value."""
        one = constant(1, name="b_count")
        self.enter()
        self._values.add(count)
        enter_count = self._enter_variable(count, "b_count")
        merged = merge([enter_count, enter_count])[0]
        self.pivot_for_pred = merged
        pred = math_ops.greater_equal(merged, one)
        self.pivot = make_op("LoopCond", [pred], "b_count").outputs[0]
        switched = switch(merged, self.pivot)
        index = math_ops.subtract(switched[1], one)
        self.pivot_for_body = index
        following = next_iteration(index)
        merged.op._update_input(1, following)
        final_zero = make_op("Exit", [switched[0]], "b_count").outputs[0]
        self.exits.append(final_zero)
        if outer_grad_state is not None:
            outer_grad_state.grad_sync._add_control_input(final_zero.op)
        self.exit_result([final_zero])
        self.exit()
        return following

    def add_backprop_accumulator(self, op: Operation, grad: Tensor) -> Tensor:
        """TF's ``AddBackpropAccumulator``: the gradient of a value the forward body read from
        outside (``op``, its constant Enter), summed over the iterations (``b_acc``)."""
        self.exit()
        shape = grad.shape
        outer = self.outer
        if shape.is_fully_defined:
            if outer is not None:
                outer.enter()
            acc = constant(0, grad.dtype.base_dtype, shape=shape.as_list(), name="b_acc")
            if outer is not None:
                outer.exit()
        elif isinstance(outer, WhileContext) and outer.grad_state is not None:
            forward = self.grad_state.forward
            forward.outer.enter()
            zeros_shape = shape_ops.shape(op.inputs[0], optimize=False)
            forward.outer.exit()
            outer_grad_state = self.grad_state.outer_grad_state
            history = outer_grad_state.add_forward_accumulator(zeros_shape)
            outer.enter()
            real_shape = outer_grad_state.add_backprop_accumulated_value(history, zeros_shape)
            acc = array_ops.zeros(real_shape, grad.dtype.base_dtype)
            outer.exit()
        else:
            if outer is not None:
                outer.enter()
            zeros_shape = shape_ops.shape(op.inputs[0], optimize=False)
            acc = array_ops.zeros(zeros_shape, grad.dtype.base_dtype)
            if outer is not None:
                outer.exit()
        self.enter()
        self._values.add(acc)
        enter_acc = self._enter_variable(acc, "b_acc")
        merged = merge([enter_acc, enter_acc], name="b_acc")[0]
        assert self.pivot is not None
        switched = switch(merged, self.pivot)
        added = math_ops.add(switched[1], grad)
        merged.op._update_input(1, next_iteration(added))
        result = make_op("Exit", [switched[0]], "b_acc").outputs[0]
        self.exits.append(result)
        self.exit_result([result])
        return result

    def _enter_variable(self, value: Tensor, name: str) -> Tensor:
        """A loop variable's Enter, made while this context is current."""
        entered = enter(value, self, is_constant=False, name=name)
        self.enters.append(entered)
        return entered


def enter(
    value: Tensor,
    context: WhileContext,
    is_constant: bool,
    shape: TensorShape | None = None,
    name: str = "Enter",
) -> Tensor:
    attrs = {
        "frame_name": context.name,
        "is_constant": is_constant,
        "parallel_iterations": context.parallel_iterations,
    }
    op_type = "RefEnter" if value.dtype.is_ref_dtype else "Enter"  # TF's use_ref
    with value.graph.name_scope(op_type if name == "Enter" else name) as scope:
        result = make_op(op_type, [value], scope, attrs).outputs[0]
    if shape is not None:
        result._shape = shape  # TF's use_input_shape=False: the invariant, not the input's
    return result


def is_constant_enter(op: Operation) -> bool:
    """A loop invariant's Enter: its value enters the frame once (TF's IsLoopConstantEnter)."""
    return op.type in ENTER_TYPES and bool(op.attrs.get("is_constant"))


def _shape_less_than_or_equal(shape: TensorShape, bound: TensorShape) -> bool:
    if bound.dims is None:
        return True
    if shape.dims is None or len(shape.dims) != len(bound.dims):
        return False
    return all(b is None or a == b for a, b in zip(shape.dims, bound.dims))


def next_iteration(value: Tensor) -> Tensor:
    with value.graph.name_scope("NextIteration") as scope:
        return make_op("NextIteration", [value], scope).outputs[0]


def add_next_and_back_edge(
    merged: Tensor, value: Tensor, enforce_shape_invariant: bool = True
) -> None:
    """The body's value goes to the next iteration; its shape must fit the loop variable's
    (a backward loop's gradients need not: ``enforce_shape_invariant`` False)."""
    following = next_iteration(value)
    if not enforce_shape_invariant:
        merged.op._update_input(1, following)
        return
    if not _shape_less_than_or_equal(following.shape, merged.shape):
        entered = merged.op.inputs[0].op.inputs[0]
        raise ValueError(
            f"Input tensor '{entered.name}' enters the loop with shape {entered.shape}, but has "
            f"shape {following.shape} after one iteration. To allow the shape to vary across "
            "iterations, use the `shape_invariants` argument of tf.while_loop to specify a "
            "less-specific shape."
        )
    if following.dtype.base_dtype is not merged.dtype.base_dtype:
        raise TypeError(
            f"Loop variable '{merged.op.inputs[0].op.inputs[0].name}' has dtype "
            f"{merged.dtype.name} but the body returns {following.dtype.name} for it"
        )
    merged.op._update_input(1, following)


def while_loop(
    cond: Callable[..., Any],
    body: Callable[..., Any],
    loop_vars: Any,
    shape_invariants: Any = None,
    parallel_iterations: int = 10,
    back_prop: bool = True,
    swap_memory: bool = False,
    name: str | None = None,
    maximum_iterations: Any = None,
    return_same_structure: bool = False,
) -> Any:
    """Repeat ``body`` while ``cond`` holds, as TF1's graph-mode ``while_loop`` builds it: the
    loop variables' final values (a structure like ``loop_vars``)."""
    if any(isinstance(x, TensorArray) for x in nest.flatten(loop_vars)):
        options = dict(locals())
        for key in ("cond", "body", "loop_vars"):
            del options[key]
        return carry_tensor_arrays(while_loop, cond, body, loop_vars, options)
    graph = get_default_graph()
    with graph.name_scope(name or "while"):
        if not loop_vars:
            raise ValueError("'loop_vars' must be provided.")
        if not callable(cond):
            raise TypeError("'cond' must be callable.")
        if not callable(body):
            raise TypeError("'body' must be callable.")
        if parallel_iterations < 1:
            raise TypeError("'parallel_iterations' must be a positive integer.")
        try_to_pack = len(loop_vars) == 1 and not return_same_structure
        if maximum_iterations is not None:
            limit = convert_to_tensor(maximum_iterations, name="maximum_iterations")
            if limit.shape.ndims != 0:
                raise ValueError(
                    f"'maximum_iterations' must be a scalar. Received shape: {limit.shape}"
                )
            counter = constant(0, dtype=limit.dtype, name="iteration_counter")
            orig_cond, orig_body = cond, body
            if try_to_pack:
                loop_vars = (counter, loop_vars[0])
                cond = lambda i, lv: math_ops.logical_and(i < limit, orig_cond(lv))  # noqa: E731
                body = lambda i, lv: (i + 1, orig_body(lv))  # noqa: E731
            else:
                loop_vars = (counter, loop_vars)
                cond = lambda i, lv: math_ops.logical_and(i < limit, orig_cond(*lv))  # noqa: E731
                body = lambda i, lv: (i + 1, orig_body(*lv))  # noqa: E731
            if shape_invariants is not None:
                shape_invariants = (TensorShape(()), shape_invariants)
        else:
            limit = None
        if executing_eagerly():  # TF's eager loop: Python runs the body while cond holds
            values = list(loop_vars)
            while bool(convert_to_tensor(cond(*values)).numpy()):
                step = body(*values)
                values = list(step) if nest.is_nested(step) else [step]
            packed_eager = values
            if maximum_iterations is not None:
                return packed_eager[1]
            return packed_eager[0] if try_to_pack else packed_eager
        flat = [convert_to_tensor(x) for x in nest.flatten(loop_vars)]
        structure = nest.pack_sequence_as(loop_vars, flat)
        if shape_invariants is None:
            invariants = [x.shape for x in flat]
        else:
            if nest.is_nested(structure) and not nest.is_nested(shape_invariants):
                shape_invariants = [shape_invariants]
            flat_invariants = _flatten_shapes(shape_invariants)
            if len(flat_invariants) != len(flat):
                raise ValueError(
                    "The two structures don't have the same nested structure: loop_vars has "
                    f"{len(flat)} tensors, shape_invariants {len(flat_invariants)} shapes"
                )
            invariants = flat_invariants
        context = WhileContext(limit, parallel_iterations, back_prop, swap_memory)
        context.enter()
        try:
            body_result, exits = context.build(cond, body, structure, invariants)
        finally:
            context.exit()
        packed = nest.pack_sequence_as(body_result, exits)
        if not return_same_structure:
            packed = packed[0] if len(exits) == 1 else packed
        if maximum_iterations is not None:
            return packed[1]
        return packed


def _flatten_shapes(shapes: Any) -> list[TensorShape]:
    """Shape invariants as a flat list: a TensorShape, a list of dims or None are leaves."""
    if isinstance(shapes, TensorShape) or shapes is None:
        return [as_shape(shapes)]
    if isinstance(shapes, list | tuple):
        if all(d is None or isinstance(d, int) for d in shapes):
            return [as_shape(shapes)]
        return [s for item in shapes for s in _flatten_shapes(item)]
    return [as_shape(shapes)]
