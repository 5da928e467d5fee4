"""Momentum: ``accum = accum * momentum + grad; var -= learning_rate * accum`` (or Nesterov's)."""

from __future__ import annotations

from typing import Any

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import training_ops
from placeviz.graph.variables import Variable
from placeviz.train.optimizer import Optimizer


class MomentumOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        momentum: Any,
        use_locking: bool = False,
        name: str = "Momentum",
        use_nesterov: bool = False,
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list: list[Variable]) -> None:
        for var in var_list:
            self._zeros_slot(var, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._hyper(self._learning_rate, "learning_rate")
        self._momentum_tensor = self._hyper(self._momentum, "momentum")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        accum = self.get_slot(var, "momentum")
        assert accum is not None
        return training_ops.apply_momentum(
            var.op.outputs[0],
            accum.op.outputs[0],
            self._as_dtype_of(self._learning_rate_tensor, var),
            grad,
            self._as_dtype_of(self._momentum_tensor, var),
            use_nesterov=self._use_nesterov,
            name=None,
        )
