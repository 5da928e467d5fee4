"""Adam with TF1's update rule and state.

``lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)``, ``m = beta1 m + (1 - beta1) g``,
``v = beta2 v + (1 - beta2) g^2``, ``var -= lr_t m / (sqrt(v) + epsilon)``. ``beta1^t`` and
``beta2^t`` are variables (``beta1_power``, ``beta2_power``) colocated with the first variable by
name, multiplied by beta1 and beta2 after every step, as TensorFlow 1 does.
"""

from __future__ import annotations

from typing import Any

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import state_ops, training_ops
from placeviz.graph.variables import Variable
from placeviz.train.optimizer import Optimizer


class AdamOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any = 0.001,
        beta1: Any = 0.9,
        beta2: Any = 0.999,
        epsilon: Any = 1e-08,
        use_locking: bool = False,
        name: str = "Adam",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        first = min(var_list, key=lambda v: v.name)
        self._non_slot_variable(self._beta1, "beta1_power", first)
        self._non_slot_variable(self._beta2, "beta2_power", first)
        for var in var_list:
            self._zeros_slot(var, "m", self._name)
            self._zeros_slot(var, "v", self._name)

    def _prepare(self) -> None:
        self._lr_t = self._hyper(self._lr, "learning_rate")
        self._beta1_t = self._hyper(self._beta1, "beta1")
        self._beta2_t = self._hyper(self._beta2, "beta2")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")

    def _beta_powers(self, graph: Any) -> tuple[Variable, Variable]:
        return (
            self._get_non_slot_variable("beta1_power", graph),
            self._get_non_slot_variable("beta2_power", graph),
        )

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        assert m is not None and v is not None
        beta1_power, beta2_power = self._beta_powers(var.graph)
        values = [
            beta1_power.value(),
            beta2_power.value(),
            self._lr_t,
            self._beta1_t,
            self._beta2_t,
            self._epsilon_t,
        ]
        return training_ops.apply_adam(
            [var.op.outputs[0], m.op.outputs[0], v.op.outputs[0]]
            + [self._as_dtype_of(t, var) for t in values]
            + [grad],
            name=None,
        )

    def _finish(self, update_ops: list[Operation], name: str) -> Operation:
        graph = update_ops[0].graph
        beta1_power, beta2_power = self._beta_powers(graph)
        with graph.control_dependencies(update_ops), graph.colocate_with(beta1_power.op):
            # TF's names: Adam/mul, Adam/Assign, Adam/mul_1, Adam/Assign_1.
            update_beta1 = beta1_power.assign(beta1_power.value() * self._beta1_t)
            update_beta2 = beta2_power.assign(beta2_power.value() * self._beta2_t)
        return state_ops.group(*update_ops, update_beta1, update_beta2, name=name)
