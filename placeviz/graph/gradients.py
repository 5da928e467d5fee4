"""``pv.gradients``: TensorFlow 1's reverse-mode differentiation, built into the graph as ops.

The algorithm is TF's ``gradients_util._GradientsHelper``:

1. the ops between ``xs`` and ``ys`` are those reachable forward from an x *and* backward from
   a y; only they are differentiated, and each waits (a pending count per consuming edge) until
   every one of its consumers in between has handed back a gradient;
2. the seed for each y is ``grad_ys`` or ones shaped like y: ``gradients/Shape`` (a Const when
   y's shape is static, as TF's ``shape(optimize=True)``), ``gradients/grad_ys_0/Const`` and
   ``gradients/grad_ys_0`` (the Fill);
3. each op's gradient is built under ``gradients/<op name>_grad/`` by its registered gradient
   function (``placeviz.graph.grads``); a tensor with several consumers gets their gradients
   summed with ``gradients/AddN``; an output of a multi-output op with no gradient gets
   ``gradients/zeros_like``;
4. with ``colocate_gradients_with_ops`` everything built for an op (its gradient, the sum of its
   outputs' gradients) goes inside ``colocate_with(op, ignore_existing=True)``, so the placer
   puts it on the op's device; otherwise gradient ops take the device scope active at the call;
5. with ``gate_gradients`` (what optimizers pass, TF's ``GATE_OP``) an op's input gradients, when
   there are several, are joined as ``control_flow_ops.tuple`` joins them: ``<op>_grad/tuple/
   group_deps`` (a NoOp after all of them) and one ``tuple/control_dependency[_i]`` Identity per
   gradient, colocated with it and run after the NoOp, so none is used before all exist.

With while loops between the xs and ys, TF1's v1 control flow (``while_grad``): each loop gets
its counters and backward loop before any gradient is built, an op inside a loop has its
gradient built in that loop's backward loop, a loop's Switch is taken up each time one of its
consumers hands back a gradient, and a loop's exits wait for each other (those no y depends on
get zeros when another has a gradient).

An x's op stops the backward pass unless another x lies upstream of it (then the gradient also
flows through it, as in TF). A Variable in ``xs`` means its reference tensor: its ``read``
Identity passes the gradient on to it.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.graph import grads as _grads
from placeviz.graph import while_grad
from placeviz.graph.core import (
    Graph,
    Operation,
    Tensor,
    as_value_element,
    is_tensor_like,
)
from placeviz.graph.grads import control_flow_grad
from placeviz.graph.grads.shapes import shape_of
from placeviz.graph.ops import (
    constant_op,
    math_ops,
    shape_ops,
    state_ops,
)
from placeviz.graph.variables import Variable

_GradLists = dict[Operation, list[list[Tensor]]]


def gradients(
    ys: Any,
    xs: Any,
    grad_ys: Any = None,
    name: str = "gradients",
    colocate_gradients_with_ops: bool = False,
    gate_gradients: bool = False,
) -> list[Tensor | None]:
    """Symbolic partial derivatives of ``sum(ys)`` with respect to each of ``xs``.

    ``ys`` and ``xs`` are a tensor (or Variable) or a list of them; ``grad_ys`` optionally
    weights each y (default: ones shaped like y). Returns one tensor per x, or None where no
    differentiable path leads from that x to any y.
    """
    y_list = [_as_tensor(y, "ys") for y in _as_list(ys)]
    x_list = [_as_x(x) for x in _as_list(xs)]
    seeds = [None] * len(y_list) if grad_ys is None else _as_list(grad_ys)
    if len(seeds) != len(y_list):
        raise ValueError(f"Passed {len(seeds)} grad_ys for {len(y_list)} ys")
    if not y_list:
        return [None] * len(x_list)
    graph = y_list[0].graph
    for tensor in y_list + x_list:
        if tensor.graph is not graph:
            raise ValueError(f"Tensor '{tensor.name}' is not in the same graph as the ys.")
    with graph.as_default(), graph.name_scope(name):
        backprop = _Backprop(graph, y_list, x_list, colocate_gradients_with_ops, gate_gradients)
        return backprop.run(seeds)


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _as_tensor(value: Any, what: str) -> Tensor:
    element = as_value_element(value)
    if not isinstance(element, Tensor):
        raise TypeError(f"{what} must be tensors, got Operation '{element.name}'")
    return element


def _as_x(value: Any) -> Tensor:
    """A Variable stands for its reference tensor (the Variable op's output), as in TF 1."""
    if isinstance(value, Variable):
        return value.op.outputs[0]
    return _as_tensor(value, "xs")


class _Backprop:
    """One call's state: the ops between xs and ys, pending counts and gradients so far, and
    the state of the while loops among them (``while_grad``; None without loops)."""

    def __init__(
        self, graph: Graph, ys: list[Tensor], xs: list[Tensor], colocate: bool, gate: bool
    ) -> None:
        self.graph = graph
        self.ys = ys
        self.xs = xs
        self.colocate = colocate
        self.gate = gate
        self.between = self._between_ops()
        self.loop_state = while_grad.maybe_create_control_flow_state(self.between, colocate)
        self.pending: defaultdict[Operation, int] = defaultdict(int)
        for op in self.between:
            for tensor in op.inputs:
                if tensor.op in self.between:
                    self.pending[tensor.op] += 1
        self.grads: _GradLists = {}
        self._aggregated: set[Operation] = set()

    def _between_ops(self) -> dict[Operation, None]:
        """Ops reachable forward from an x and backward from a y, in discovery order. Forward,
        only float outputs lead on (TF's ``_IsBackpropagatable``): no gradient flows through an
        ArgMax's indices or a Shape, so the ops that read them are not between."""
        consumers: defaultdict[Operation, list[Operation]] = defaultdict(list)
        for op in self.graph.get_operations():
            for tensor in op.inputs:
                if tensor.dtype.base_dtype.is_floating:
                    consumers[tensor.op].append(op)
        reached: set[Operation] = set()
        stack = [x.op for x in self.xs]
        while stack:
            op = stack.pop()
            if op not in reached:
                reached.add(op)
                stack.extend(consumers[op])
        between: dict[Operation, None] = {}
        queue = deque(y.op for y in self.ys)
        while queue:
            op = queue.popleft()
            if op in reached and op not in between:
                between[op] = None
                queue.extend(t.op for t in op.inputs)
        return between

    # -- the backward pass ---------------------------------------------------------------------
    def run(self, seeds: Sequence[Any]) -> list[Tensor | None]:
        for i, (y, seed) in enumerate(zip(self.ys, seeds)):
            with self._colocated(y.op):
                self._add_grad(y, self._seed(i, y, seed))
        queue: deque[Operation] = deque()
        to_ops: set[Operation] = set()
        for y in self.ys:
            if y.op in self.between and self.pending[y.op] == 0 and y.op not in to_ops:
                to_ops.add(y.op)
                queue.append(y.op)
        loop_state = self.loop_state
        if loop_state is not None:
            for y in loop_state.process_unused_loop_exits(self.pending, to_ops):
                if while_grad.is_trainable(y):
                    self._add_grad(y, loop_state.zeros_like_for_exit(y))
                queue.append(y.op)
        x_ops = {x.op for x in self.xs}
        stop_ops = {op for op in x_ops if not any(self.pending[t.op] > 0 for t in op.inputs)}
        while queue:
            op = queue.popleft()
            with self._colocated(op):
                if loop_state is not None:
                    loop_state.enter_grad_while_context(op, before=True)
                out_grads = self._aggregate(op)
                if loop_state is not None:
                    loop_state.exit_grad_while_context(op, before=True)
                    loop_state.enter_grad_while_context(op, before=False)
                if op not in stop_ops and any(g is not None for g in out_grads):
                    in_grads = self._op_gradients(op, out_grads)
                else:
                    in_grads = [None] * len(op.inputs)
                for tensor, grad in zip(op.inputs, in_grads):
                    if grad is not None:
                        self._refine_shape(op, tensor, grad)
                        self._add_grad(tensor, grad)
                if loop_state is not None:
                    loop_state.exit_grad_while_context(op, before=False)
            self._enqueue_ready(op, queue)
        if loop_state is not None:
            loop_state.post_processing()
        return [self._final_grad(x) for x in self.xs]

    def _enqueue_ready(self, op: Operation, queue: deque[Operation]) -> None:
        """TF's ``_UpdatePendingAndEnqueueReady``: an input's op is ready once every op between
        that reads it handed back its gradient; a loop's Switch each time one does; a loop's
        exits together, once all of them are ready."""
        loop_state = self.loop_state
        for tensor in op.inputs:
            source = tensor.op
            self.pending[source] -= 1
            ready = self.pending[source] == 0
            if loop_state is not None and not ready:
                ready = self.pending[source] > 0 and while_grad.is_loop_switch(source)
            if not ready:
                continue
            if not while_grad.is_loop_exit(source):
                queue.append(source)
                continue
            assert loop_state is not None
            grad_state = loop_state.get_grad_state(source, before=False)
            assert grad_state is not None
            grad_state.deferred_exits.append(tensor)
            grad_state.pending_exits_count -= 1
            if grad_state.pending_exits_count:
                continue
            used = False
            for y in grad_state.deferred_exits:
                if any(self.grads.get(y.op, ())):
                    used = True
                    queue.append(y.op)
                else:
                    grad_state.unused_exits.append(y)
            for y in grad_state.unused_exits:
                if used and while_grad.is_trainable(y):
                    self._add_grad(y, loop_state.zeros_like_for_exit(y))
                queue.append(y.op)

    def _seed(self, index: int, y: Tensor, seed: Any) -> Tensor:
        """``grad_ys[index]``, or ones shaped like y (TF's Shape, grad_ys_<i> and Fill)."""
        name = f"grad_ys_{index}"
        if seed is None:
            # TF's ``ones(shape(y), name=name)``: Shape, then grad_ys_0/Const filled as grad_ys_0.
            dims = shape_of(y)
            with y.graph.name_scope(name) as scope:
                one = constant_op.constant(1, dtype=y.dtype)
                return shape_ops.fill(dims, one, name=scope)
        is_tensor = is_tensor_like(seed)
        tensor = constant_op.convert_to_tensor(
            seed, dtype=None if is_tensor else y.dtype, name=f"grad_y_{index}"
        )
        if tensor.dtype is not y.dtype:
            raise TypeError(
                f"grad_ys[{index}] has dtype {tensor.dtype.name}, but y '{y.name}' has dtype "
                f"{y.dtype.name}"
            )
        if not tensor.shape.is_compatible_with(y.shape):
            raise ValueError(
                f"grad_ys[{index}] has shape {tensor.shape}, but y '{y.name}' has shape {y.shape}"
            )
        # TF's: an Identity in the gradients' scope tells which call a given seed belongs to.
        return state_ops.identity(tensor, name=name)

    def _op_gradients(self, op: Operation, out_grads: list[Tensor | None]) -> list[Any]:
        fn = _grads.gradient_function(op)
        if fn is None:
            return [None] * len(op.inputs)
        for i, grad in enumerate(out_grads):
            if grad is None and while_grad.is_trainable(op.outputs[i]):
                # The ys do not depend on this output: its gradient is zero.
                if self.loop_state is not None:
                    out_grads[i] = self.loop_state.zeros_like_v1_while_loop(op, i)
                else:
                    out_grads[i] = control_flow_grad.zeros_like_output(op, i)
        with self.graph.name_scope(f"{op.name}_grad"):
            in_grads = list(fn(op, *out_grads))
            if self.gate and sum(isinstance(g, Tensor) for g in in_grads) > 1:
                # TF's: the gate ignores the forward op's colocation and any device scope
                with self.graph.colocate_with(None, ignore_existing=True):
                    in_grads = state_ops.gated_tuple(in_grads)
        if len(in_grads) != len(op.inputs):
            raise ValueError(
                f"The gradient of '{op.name}' ({op.type}) has {len(in_grads)} values, but the op "
                f"has {len(op.inputs)} inputs"
            )
        return in_grads

    def _aggregate(self, op: Operation) -> list[Tensor | None]:
        """Each output's gradients summed: one is used as it is, several go through AddN."""
        lists = self.grads.get(op)
        if lists is None:
            return [None] * len(op.outputs)
        out: list[Tensor | None] = []
        for grads in lists:
            if not grads:
                out.append(None)
            else:
                out.append(self._add_n(grads))
        self.grads[op] = [[g] if g is not None else [] for g in out]
        self._aggregated.add(op)
        return out

    def _add_grad(self, tensor: Tensor, grad: Tensor) -> None:
        lists = self.grads.setdefault(tensor.op, [[] for _ in tensor.op.outputs])
        if tensor.op in self._aggregated:  # a loop's Switch, reached again from the body
            lists[tensor.value_index] = [grad]
        else:
            lists[tensor.value_index].append(grad)

    def _final_grad(self, x: Tensor) -> Tensor | None:
        lists = self.grads.get(x.op)
        if not lists or not lists[x.value_index]:
            return None
        with self._colocated(x.op):
            return self._add_n(lists[x.value_index])

    def _add_n(self, grads: list[Tensor]) -> Tensor:
        """TF's ``_MultiDeviceAddN``: the gradients requested on each device summed there, each
        sum colocated with its first summand's op (``gradients/AddN`` has ``loc:@`` that op,
        whether or not gradients are colocated with their ops), then the partial sums summed.
        One tensor is its own sum (``add_n([x])`` is x)."""
        by_device: dict[str, list[Tensor]] = {}
        for grad in grads:
            by_device.setdefault(grad.device or "", []).append(grad)
        sums = []
        for device in sorted(by_device):
            tensors = by_device[device]
            with self.graph.colocate_with(tensors[0].op, ignore_existing=True):
                sums.append(math_ops.add_n(tensors))
        return math_ops.add_n(sums)

    @staticmethod
    def _refine_shape(op: Operation, tensor: Tensor, grad: Tensor) -> None:
        """A gradient has its input's shape: keep what static shape the input knows."""
        if tensor.dtype.base_dtype is dtypes.resource:
            return
        try:
            grad.set_shape(tensor.shape)
        except ValueError:
            raise ValueError(
                f"The gradient of '{op.name}' ({op.type}) for input '{tensor.name}' has shape "
                f"{grad.shape}, but the input has shape {tensor.shape}"
            ) from None

    @contextlib.contextmanager
    def _colocated(self, op: Operation) -> Iterator[None]:
        if not self.colocate:
            yield
            return
        with self.graph.colocate_with(op, ignore_existing=True):
            yield
