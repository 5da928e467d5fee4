"""Adadelta with TF1's update rule and state.

``accum = rho accum + (1 - rho) g^2``; ``update = sqrt(accum_update + epsilon) / sqrt(accum +
epsilon) g``; ``accum_update = rho accum_update + (1 - rho) update^2``; ``var -= lr update``.
Both accumulators start at zero.
"""

from __future__ import annotations

from typing import Any

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import training_ops
from placeviz.graph.variables import Variable
from placeviz.train.optimizer import Optimizer


class AdadeltaOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any = 0.001,
        rho: Any = 0.95,
        epsilon: Any = 1e-8,
        use_locking: bool = False,
        name: str = "Adadelta",
    ) -> None:
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list: list[Variable]) -> None:
        for var in var_list:
            self._zeros_slot(var, "accum", self._name)
            self._zeros_slot(var, "accum_update", self._name)

    def _prepare(self) -> None:
        self._lr_t = self._hyper(self._lr, "lr")
        self._rho_t = self._hyper(self._rho, "rho")
        self._epsilon_t = self._hyper(self._epsilon, "epsilon")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        accum = self.get_slot(var, "accum")
        accum_update = self.get_slot(var, "accum_update")
        assert accum is not None and accum_update is not None
        return training_ops.apply_update(
            "ApplyAdadelta",
            [var.op.outputs[0], accum.op.outputs[0], accum_update.op.outputs[0]]
            + [self._as_dtype_of(t, var) for t in (self._lr_t, self._rho_t, self._epsilon_t)]
            + [grad],
        )
