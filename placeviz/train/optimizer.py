"""TF1's ``Optimizer``: gradients, slots beside their variable, one update op per variable.

Placement follows TensorFlow: slots and the update op are colocated with their variable, so a
variable on a parameter server is updated there; with ``colocate_gradients_with_ops`` each gradient
op runs where its forward op runs (the towers of a data-parallel model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from placeviz import dtypes
from placeviz.distribute.context import get_replica_context
from placeviz.distribute.values import MirroredVariable, PerReplica, local_variable
from placeviz.graph.core import Graph, Operation, Tensor
from placeviz.graph.gradients import gradients
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.ops import array_ops, math_ops, state_ops
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.variables import Variable, without_variable_creators

GradsAndVars = list[tuple[Tensor | None, Variable]]
TRAIN_OP = GraphKeys.TRAIN_OP


class Optimizer:
    """Base class: subclasses say which slots a variable needs and how one update is made."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # slot name -> {variable: slot variable}
        self._slots: dict[str, dict[Variable, Variable]] = {}
        self._non_slot: dict[tuple[str, Graph], Variable] = {}

    def get_name(self) -> str:
        return self._name

    # -- the public steps ----------------------------------------------------------------------
    def minimize(
        self,
        loss: Tensor,
        global_step: Variable | None = None,
        var_list: Sequence[Variable] | None = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        name: str | None = None,
        grad_loss: Tensor | None = None,
    ) -> Operation:
        """compute_gradients then apply_gradients, as one training op."""
        grads_and_vars = self.compute_gradients(
            loss,
            var_list=var_list,
            gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            grad_loss=grad_loss,
        )
        if all(g is None for g, _ in grads_and_vars):
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not "
                f"support gradients, between variables {[v.name for _, v in grads_and_vars]} "
                f"and loss {loss!r}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(
        self,
        loss: Tensor,
        var_list: Sequence[Variable] | None = None,
        gate_gradients: int = GATE_OP,
        aggregation_method: Any = None,
        colocate_gradients_with_ops: bool = False,
        grad_loss: Tensor | None = None,
    ) -> GradsAndVars:
        """(gradient, variable) pairs; the gradient is None where the loss does not depend on it."""
        if gate_gradients not in (self.GATE_NONE, self.GATE_OP, self.GATE_GRAPH):
            raise ValueError(
                f"gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                f"Optimizer.GATE_GRAPH.  Not {gate_gradients}"
            )
        if not isinstance(loss, Tensor):
            raise TypeError(f"loss must be a Tensor, got {loss!r}")
        if var_list is None:
            var_list = loss.graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)
        variables = list(var_list)
        if not variables:
            raise ValueError("No variables to optimize.")
        for variable in variables:
            if not isinstance(variable, Variable | MirroredVariable):
                raise TypeError(f"Argument is not a pv.Variable: {variable!r}")
        _check_float([loss.dtype] + [v.dtype for v in variables], loss)
        grads = gradients(
            loss,
            [local_variable(v) for v in variables],
            grad_ys=None if grad_loss is None else [grad_loss],
            colocate_gradients_with_ops=colocate_gradients_with_ops,
            gate_gradients=gate_gradients == self.GATE_OP,
        )
        if gate_gradients == self.GATE_GRAPH:
            grads = state_ops.gated_tuple(grads)
        return list(zip(grads, variables))

    def apply_gradients(
        self,
        grads_and_vars: Sequence[tuple[Tensor | None, Variable]],
        global_step: Variable | None = None,
        name: str | None = None,
    ) -> Operation:
        """One update op per variable with a gradient, grouped; then ``global_step += 1``.

        Inside ``strategy.run`` the replicas' gradients are summed first (on every device that
        holds a copy) and each copy gets the same update.
        """
        pairs = list(grads_and_vars)
        replica = get_replica_context()
        if replica is not None:
            return replica.merge_call(self._distributed_apply, (pairs, global_step, name))
        if not pairs:
            raise ValueError("No variables provided.")
        with_grad = [(g, v) for g, v in pairs if g is not None]
        if not with_grad:
            raise ValueError(
                f"No gradients provided for any variable: {[(None, v.name) for _, v in pairs]}."
            )
        graph = with_grad[0][1].graph
        with graph.as_default():
            self._create_slots([v for _, v in with_grad])  # variables ignore control deps
            with graph.name_scope(name or self._name) as scope:
                self._prepare()
                updates = []
                for grad, var in with_grad:
                    with graph.name_scope("update_" + var.op.name), graph.colocate_with(var.op):
                        updates.append(self._apply_dense(grad, var))
                if global_step is None:
                    train_op = self._finish(updates, scope[:-1] + "/")
                else:
                    finished = self._finish(updates, "update")
                    with (
                        graph.control_dependencies([finished]),
                        graph.colocate_with(global_step.op),
                    ):
                        step = state_ops.assign_add(global_step, 1, name=scope[:-1] + "/")
                    train_op = step.op
        if train_op not in graph.get_collection(TRAIN_OP):
            graph.add_to_collection(TRAIN_OP, train_op)
        return train_op

    def _distributed_apply(
        self,
        strategy: Any,
        grads_and_vars: PerReplica,
        global_step: PerReplica,
        name: PerReplica,
    ) -> Operation:
        """Sum each variable's gradients over replicas, then update every copy with the sum."""
        replicas = grads_and_vars.values
        pairs: GradsAndVars = []
        for position, (_, mirrored) in enumerate(replicas[0]):
            grads = [r[position][0] for r in replicas if r[position][0] is not None]
            for copy in strategy.experimental_local_results(mirrored):
                if not grads:
                    pairs.append((None, copy))
                    continue
                graph = copy.graph
                with graph.name_scope("allreduce"), graph.colocate_with(copy.op):
                    pairs.append((math_ops.add_n(grads) if len(grads) > 1 else grads[0], copy))
        return self.apply_gradients(pairs, global_step=global_step.values[0], name=name.values[0])

    # -- slots ---------------------------------------------------------------------------------
    def get_slot_names(self) -> list[str]:
        return sorted(self._slots)

    def get_slot(self, var: Variable, name: str) -> Variable | None:
        return self._slots.get(name, {}).get(var)

    def variables(self) -> list[Variable]:
        """The optimizer's own variables: slots and non-slot state like Adam's beta powers."""
        found = [s for slots in self._slots.values() for s in slots.values()]
        return found + list(self._non_slot.values())

    def _zeros_slot(self, var: Variable, slot_name: str, op_name: str) -> Variable:
        """A variable of zeros shaped like ``var``, on its device, named ``<var>/<op_name>``."""
        return self._slot(var, lambda: _zeros_like_variable(var), slot_name, op_name)

    def _slot(
        self, var: Variable, initial_value: Callable[[], Any], slot_name: str, op_name: str
    ) -> Variable:
        """A slot made by ``initial_value`` (under ``<var>/<op_name>/Initializer``), on the
        variable's device: RMSProp's starts at ones, Adagrad's at its initial accumulator."""
        slots = self._slots.setdefault(slot_name, {})
        if var not in slots:
            slots[var] = _colocated_variable(var, initial_value, f"{var.op.name}/{op_name}")
        return slots[var]

    def _non_slot_variable(self, initial_value: float, name: str, first: Variable) -> Variable:
        """One variable per graph (e.g. Adam's ``beta1_power``), colocated with ``first``."""
        key = (name, first.graph)
        if key not in self._non_slot:
            self._non_slot[key] = _colocated_variable(first, lambda: initial_value, name)
        return self._non_slot[key]

    def _get_non_slot_variable(self, name: str, graph: Graph) -> Variable:
        return self._non_slot[(name, graph)]

    # -- what subclasses define ----------------------------------------------------------------
    def _create_slots(self, var_list: list[Variable]) -> None:
        """Create the slot variables each update needs (none for plain gradient descent)."""

    def _prepare(self) -> None:
        """Turn hyperparameters into tensors, once per apply_gradients."""

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        raise NotImplementedError

    def _finish(self, update_ops: list[Operation], name: str) -> Operation:
        return state_ops.group(*update_ops, name=name)

    # -- helpers for subclasses ------------------------------------------------------------------
    @staticmethod
    def _hyper(value: Any, name: str) -> Tensor:
        return value if isinstance(value, Tensor) else convert_to_tensor(value, name=name)

    @staticmethod
    def _as_dtype_of(value: Tensor, var: Variable) -> Tensor:
        if value.dtype is var.dtype.base_dtype:
            return value
        return array_ops.cast(value, var.dtype.base_dtype)


def _colocated_variable(primary: Variable, initial_value: Callable[[], Any], name: str) -> Variable:
    graph = primary.graph
    with (
        graph.as_default(),
        without_variable_creators(),
        graph.name_scope(None),
        graph.colocate_with(primary.op),
    ):
        return Variable(initial_value, trainable=False, name=name, dtype=primary.dtype.base_dtype)


def _zeros_like_variable(var: Variable) -> Tensor:
    if var.shape.is_fully_defined:
        return array_ops.zeros(var.shape.as_list(), dtype=var.dtype.base_dtype)
    return array_ops.zeros_like(var.initial_value)


def _check_float(kinds: Sequence[dtypes.DType], loss: Tensor) -> None:
    for dtype in kinds:
        if dtype.base_dtype not in dtypes.FLOATS:
            raise ValueError(
                f"Invalid type {dtype.name} for {loss.name}, expected: "
                f"[{', '.join(d.name for d in dtypes.FLOATS)}]."
            )
