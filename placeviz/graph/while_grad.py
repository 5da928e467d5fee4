"""The gradient of a while loop: a backward loop over the forward loop's iterations, in reverse.

TensorFlow pushes what the backward pass needs onto stacks while the forward loop runs and pops
it in a backward while loop. placeviz keeps those values per iteration too (the forward
FrameRunner's ``LoopHistory``) and builds the backward loop from the same pieces: its trip count
is the forward loop's (``LoopIterationCount``), and a forward value the gradient functions read
is that value at the matching iteration (``LoopHistoryRead``, TF's StackPopV2). Each backward
iteration back-propagates one forward iteration, from the body's results to its loop variables
(through ``Identity``) and to the outer values it read (through their constant ``Enter``, whose
gradients are summed over the iterations). A loop inside an outermost loop's body keeps its
values per outer iteration: its backward loop, built inside the outer backward loop's body, reads
its run in the outer iteration being back-propagated (a loop inside a cond, or deeper, raises
NotImplementedError). The op names under ``gradients/`` differ from TensorFlow's stack
machinery; the values are the same.
"""

from __future__ import annotations

from typing import Any

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import array_ops, math_ops
from placeviz.graph.ops._build import make_op
from placeviz.graph.while_loop import WhileContext, output_context, while_context_of, while_loop


class GradWhileContext(WhileContext):
    """The backward loop: a forward loop's value is read from its history at ``index`` (of
    the forward loop's run in the outer loop's iteration ``instance``, for a nested loop)."""

    forward: WhileContext
    index: Tensor | None = None
    instance: Tensor | None = None

    def add_value(self, value: Tensor) -> Tensor:
        if while_context_of(output_context(value.op)) is self.forward and self.index is not None:
            read = self._external.get(value)
            if read is None:
                self.forward.history_tensors[id(value)] = value
                attrs = {"tensor": value, "loop": self.forward}
                at = [self.index] if self.instance is None else [self.instance, self.index]
                read = make_op("LoopHistoryRead", at, "LoopHistoryRead", attrs).outputs[0]
                self._external[value] = read
                self._values.add(read)
            return read
        return super().add_value(value)


def is_loop_plumbing(op: Operation, loop: WhileContext) -> bool:
    """Whether ``op`` is one of ``loop``'s own Enter/Merge/Switch/NextIteration/Exit/LoopCond
    ops (not a constant Enter, an outer value the body reads: that is an x)."""
    return op._id in loop.plumbing


def loop_gradient(
    loop: WhileContext, exit_grads: list[Tensor | None], backprop_type: Any, gate: bool
) -> list[tuple[Tensor, Tensor]]:
    """Gradients of the loop's outer inputs (its loop variables' initial values and the outer
    values its body reads), given the gradients of its exits."""
    instance = _outer_iteration(loop)
    loop.keeps_history = True
    variables = [m.op.inputs[0].op for m in _merges(loop)]  # the non-constant Enters
    identities = _identities(loop)
    nexts = [m.op.inputs[1].op for m in _merges(loop)]
    floats = [k for k, e in enumerate(loop.exits) if e.dtype.base_dtype.is_floating]
    constants = [
        op
        for op in loop.graph.get_operations()
        if op.type == "Enter"
        and op._control_flow_context is loop
        and op.attrs.get("is_constant")
        and op.outputs[0].dtype.base_dtype.is_floating
    ]
    seeds = [
        exit_grads[k] if exit_grads[k] is not None else array_ops.zeros_like(loop.exits[k])
        for k in floats
    ]
    sums = [array_ops.zeros_like(c.inputs[0]) for c in constants]
    # after the loop ran (its exit), or in the outer loop's iteration (whose run it counts)
    after = [loop.exits[0]] if instance is None else [instance]
    attrs = {"loop": loop, "nested": instance is not None}
    count = make_op("LoopIterationCount", after, "LoopIterationCount", attrs).outputs[0]

    def make_context(*args: Any) -> GradWhileContext:
        context = GradWhileContext(*args)
        context.forward = loop
        context.instance = instance
        made.append(context)
        return context

    made: list[GradWhileContext] = []

    def cond(i: Tensor, grads: list[Tensor], acc: list[Tensor]) -> Tensor:
        return i < count

    def body(i: Tensor, grads: list[Tensor], acc: list[Tensor]) -> Any:
        context = made[-1]
        context.index = count - 1 - i
        ys = [nexts[k].inputs[0] for k in floats]
        xs = [identities[k] for k in floats] + [c.outputs[0] for c in constants]
        step = backprop_type(loop.graph, ys, xs, False, gate, boundary=loop)
        found = step.run(list(grads))
        new_grads = [
            g if g is not None else array_ops.zeros_like(grads[n])
            for n, g in enumerate(found[: len(floats)])
        ]
        new_acc = [
            a if g is None else math_ops.add(a, g) for a, g in zip(acc, found[len(floats) :])
        ]
        return i + 1, new_grads, new_acc

    _, final, totals = while_loop(
        cond, body, [0, seeds, sums], name="while_grad", _context=make_context
    )
    result = [(variables[k].inputs[0], grad) for k, grad in zip(floats, final)]
    result += [(constant.inputs[0], total) for constant, total in zip(constants, totals)]
    return result


def _outer_iteration(loop: WhileContext) -> Tensor | None:
    """For a loop inside another loop's body: the forward iteration of the outer loop that the
    outer loop's backward body (being built now) back-propagates; None for an outermost loop."""
    if loop.outer is None:
        return None
    building = loop.graph._control_flow_context
    outer = loop.outer
    if (
        not isinstance(outer, WhileContext)
        or outer.outer is not None
        or not isinstance(building, GradWhileContext)
        or building.forward is not outer
        or building.index is None
    ):
        raise NotImplementedError(
            f"placeviz differentiates a while loop ({loop.name}) that is outermost or inside "
            "the body of an outermost loop, not one inside a cond or deeper"
        )
    return building.index


def _merges(loop: WhileContext) -> list[Tensor]:
    return [e.op.inputs[0].op.inputs[0] for e in loop.exits]  # Exit <- Switch <- Merge


def _identities(loop: WhileContext) -> list[Tensor]:
    """Each loop variable as the body sees it: the Identity of its Switch's true output."""
    found = []
    for exit_tensor in loop.exits:
        switch = exit_tensor.op.inputs[0].op
        identity = next(
            op
            for op in loop.graph.get_operations()
            if op.type == "Identity" and op.inputs and op.inputs[0] is switch.outputs[1]
        )
        found.append(identity.outputs[0])
    return found
