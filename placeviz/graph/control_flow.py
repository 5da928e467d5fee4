"""``pv.cond``: TensorFlow 1's conditional, built from Switch and Merge (``case`` is nested
conds: control_flow_case.py).

As TF's ``CondContext``: ``cond`` switches the predicate on itself (``cond/Switch``), names the
two pivots (``cond/switch_t``, ``cond/switch_f``) and the predicate (``cond/pred_id``), then
builds each branch inside a context. Every op created in a branch passes through ``add_op``: an
input from outside the branch is read through a Switch on ``pred_id`` (``<op>/Switch``, made
after the op and colocated with the value), an op without inputs waits on the branch's pivot,
so the whole branch is dead when the other one is taken. The branches' results meet in
``cond/Merge``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from placeviz import nest
from placeviz.graph.core import Graph, Operation, Tensor, executing_eagerly, get_default_graph
from placeviz.graph.ops import control_flow_ops, state_ops  # noqa: F401 (registers Switch, Merge)
from placeviz.graph.ops._build import make_op
from placeviz.graph.ops.constant_op import convert_to_tensor


class CondContext:
    """One branch of a cond: its predicate, its pivot, which branch it is (1: true) and the
    values already available inside it (an outer value maps to the Switch that brings it in)."""

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int) -> None:
        self.graph = pred.graph
        self.outer: CondContext | None = self.graph._control_flow_context
        self.pred = pred
        self.pivot = pivot
        self.branch = branch
        self._values: set[Tensor] = {pred, pivot}
        self._external: dict[Tensor, Tensor] = {pred: pred}
        pivot.op._control_flow_context = self

    def enter(self) -> None:
        self.graph._control_flow_context = self

    def exit(self) -> None:
        self.graph._control_flow_context = self.outer

    def add_value(self, value: Tensor) -> Tensor:
        """``value`` as seen inside this branch: through a Switch when it comes from outside."""
        if value in self._values:
            return self._external.get(value, value)
        with self.graph.control_dependencies(None):
            result = switch_ref_or_tensor(self._from_outer(value), self.pred)[self.branch]
        self.graph.prevent_fetching(result.op)
        result.op._control_flow_context = self
        self._add_values([result])
        self._external[value] = result
        return result

    def _from_outer(self, value: Tensor) -> Tensor:
        """``value``, now a value of this context, as the enclosing cond sees it (itself
        outside any)."""
        self._values.add(value)
        if self.outer is None:
            return value
        outer = self.outer.add_value(value)
        self._values.add(outer)
        self._external[outer] = outer
        return outer

    def _add_values(self, values: Any) -> None:
        """``values`` belong to this branch and to every enclosing one."""
        context: CondContext | None = self
        while context is not None:
            context._values.update(values)
            context = context.outer

    def add_op(self, op: Operation) -> None:
        """TF's ``_AddOpInternal``: bring outer inputs in, or gate an op without inputs on the
        pivot; the op's outputs are then values of this branch and of the enclosing ones."""
        if not op.inputs:
            if not any(_in_context(c, self) for c in op.control_inputs):
                op._add_control_input(self.pivot.op)
        else:
            bring_inputs_in(self, op)
        self._add_values(op.outputs)
        self.graph.prevent_fetching(op)

    def build_branch(self, fn: Callable[[], Any]) -> tuple[Any, list[Tensor] | None]:
        """Call ``fn`` in this branch: its results (tensors, Python values, ops) as the branch
        gives them out, each an output of the branch (an outer value through its Switch)."""
        original = fn()
        if original is None:
            return None, None
        result = [self._branch_output(leaf) for leaf in nest.flatten(original)]
        return original, result

    def _branch_output(self, value: Any) -> Tensor:
        if isinstance(value, Operation):  # TF's with_dependencies([op], pivot)
            with (
                self.graph.name_scope("control_dependency") as scope,
                self.graph.colocate_with(self.pivot.op),
                self.graph.control_dependencies([value]),
            ):
                return make_op("Identity", [self.pivot], scope).outputs[0]
        tensor = convert_to_tensor(value)
        if tensor not in self._values:  # `lambda: x` of an outer x
            real = switch_ref_or_tensor(self._from_outer(tensor), self.pred)[self.branch]
            self._external[tensor] = real
            return real
        return self._external.get(tensor, tensor)


def bring_inputs_in(context: Any, op: Operation) -> None:
    """Each input of ``op`` from outside ``context`` (a cond's branch or a loop) replaced by the
    value the context brings it in as (``context.add_value``), made under ``<op name>/``."""
    with context.graph.name_scope(f"{op.name}/"):
        for index, tensor in enumerate(op.inputs):
            real = context.add_value(tensor)
            if real is not tensor:
                op._update_input(index, real)


def _in_context(op: Operation, context: CondContext) -> bool:
    """Whether ``op`` was built in ``context`` or in a context inside it."""
    inner = op._control_flow_context
    while inner is not None:
        if inner is context:
            return True
        inner = inner.outer
    return False


def switch(data: Any, pred: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(output_false, output_true)``: ``data`` on the output ``pred`` selects, the other dead."""
    data_tensor = convert_to_tensor(data)
    graph = data_tensor.graph
    with graph.name_scope(name or "Switch") as scope:
        pred_tensor = convert_to_tensor(pred)
        op = make_op("Switch", [data_tensor, pred_tensor], scope)
    return op.outputs[0], op.outputs[1]


def switch_ref_or_tensor(data: Tensor, pred: Tensor, name: str = "Switch") -> tuple[Tensor, Tensor]:
    """TF's ``_SwitchRefOrTensor``: colocated with ``data``; of a variable's reference, a
    RefSwitch (which the placer keeps with the variable)."""
    graph = data.graph
    with graph.colocate_with(data.op, ignore_existing=True):
        if data.dtype.is_ref_dtype:
            with graph.name_scope(name) as scope:
                op = make_op("RefSwitch", [data, pred], scope)
            return op.outputs[0], op.outputs[1]
        return switch(data, pred, name=name)


def merge(inputs: Sequence[Tensor], name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(output, value_index)``: the one input that is alive, and which it is."""
    graph = inputs[0].graph
    with graph.name_scope(name or "Merge") as scope:
        if all(t.dtype.is_ref_dtype for t in inputs):  # kept with the first reference (TF)
            with graph.colocate_with(inputs[0].op):
                op = make_op("RefMerge", list(inputs), scope)
        else:
            op = make_op("Merge", list(inputs), scope)
    return op.outputs[0], op.outputs[1]


def _unpack_if_singleton(value: Any) -> Any:
    if isinstance(value, list | tuple) and len(value) == 1:
        return value[0]
    return value


def assert_same_structure(a: Any, b: Any) -> None:
    """TF's ``nest.assert_same_structure``: ValueError for another nesting, TypeError for
    another kind of sequence at the same place."""
    if nest.is_nested(a) != nest.is_nested(b):
        raise ValueError(
            "The two structures don't have the same nested structure.\n\n"
            f"First structure: {a!r}\n\nSecond structure: {b!r}"
        )
    if not nest.is_nested(a):
        return
    if type(a) is not type(b) and not (isinstance(a, list) and isinstance(b, list)):
        raise TypeError(
            "The two structures don't have the same sequence type. Input structure has type "
            f"{type(a)}, while shallow structure has type {type(b)}."
        )
    if len(a) != len(b):
        raise ValueError(
            "The two structures don't have the same nested structure.\n\n"
            f"First structure: {a!r}\n\nSecond structure: {b!r}\n\nMore specifically: The two "
            f"structures don't have the same number of elements. First structure: {a!r}, "
            f"second structure: {b!r}."
        )
    for x, y in zip(a, b):
        assert_same_structure(x, y)


def cond(
    pred: Any,
    true_fn: Callable[[], Any] | None = None,
    false_fn: Callable[[], Any] | None = None,
    strict: bool = False,
    name: str | None = None,
    fn1: Callable[[], Any] | None = None,
    fn2: Callable[[], Any] | None = None,
) -> Any:
    """``true_fn()`` where ``pred`` is true at run time, else ``false_fn()``; only the taken
    branch's ops run (the other's are recorded as not run)."""
    if fn1 is not None:
        if true_fn is not None:
            raise TypeError("cond(): 'true_fn' and 'fn1' may not be set simultaneously.")
        true_fn = fn1
    elif true_fn is None:
        raise TypeError("cond(): 'true_fn' argument required")
    if fn2 is not None:
        if false_fn is not None:
            raise TypeError("cond(): 'false_fn' and 'fn2' may not be set simultaneously.")
        false_fn = fn2
    elif false_fn is None:
        raise TypeError("cond(): 'false_fn' argument required")
    if not callable(true_fn):
        raise TypeError("'true_fn' must be callable.")
    if not callable(false_fn):
        raise TypeError("'false_fn' must be callable.")
    if isinstance(pred, bool):
        raise TypeError("'pred' must not be a Python bool.")
    pred_tensor = convert_to_tensor(pred)
    if executing_eagerly():  # TF's eager cond: the predicate has a value, one branch runs
        result = true_fn() if bool(pred_tensor.numpy()) else false_fn()
        return result if strict else _unpack_if_singleton(result)
    graph: Graph = pred_tensor.graph
    entered = graph.as_default() if graph is not get_default_graph() else _nothing()
    with entered, graph.name_scope(name or "cond"):
        p_2, p_1 = switch(pred_tensor, pred_tensor)
        pivot_1 = state_ops.identity(p_1, name="switch_t")
        pivot_2 = state_ops.identity(p_2, name="switch_f")
        pred_id = state_ops.identity(pred_tensor, name="pred_id")
        for tensor in (p_1, pivot_1, pivot_2, pred_id):
            graph.prevent_fetching(tensor.op)
        results = []
        branches = ((true_fn, pivot_1, 1, "true_fn"), (false_fn, pivot_2, 0, "false_fn"))
        for fn, pivot, branch, label in branches:
            context = CondContext(pred_id, pivot, branch)
            context.enter()
            try:
                original, flat = context.build_branch(fn)
            finally:
                context.exit()
            if original is None:
                raise ValueError(f"'{label}' must have a return value.")
            results.append((original, flat))
        (orig_t, res_t), (orig_f, res_f) = results
        if not strict:
            orig_t, orig_f = _unpack_if_singleton(orig_t), _unpack_if_singleton(orig_f)
        try:
            assert_same_structure(orig_t, orig_f)
        except TypeError as exc:
            raise TypeError(
                f"Incompatible return types of 'true_fn' and 'false_fn': {exc}"
            ) from None
        except ValueError as exc:
            raise ValueError(
                f"Incompatible return values of 'true_fn' and 'false_fn': {exc}"
            ) from None
        if not res_t:
            raise ValueError("'true_fn' and 'false_fn' must return at least one result.")
        assert res_f is not None
        for x, y in zip(res_t, res_f):
            if x.dtype.base_dtype is not y.dtype.base_dtype:
                raise ValueError(
                    "Outputs of 'true_fn' and 'false_fn' must have the same type(s). Received "
                    f"{x.dtype.name} from 'true_fn' and {y.dtype.name} from 'false_fn'."
                )
        merges = [merge([f, t])[0] for f, t in zip(res_f, res_t)]
        packed = nest.pack_sequence_as(orig_t, merges) if nest.is_nested(orig_t) else merges[0]
        return _unpack_if_singleton(packed) if not strict else packed


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None
