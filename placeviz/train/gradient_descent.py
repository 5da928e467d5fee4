"""Plain gradient descent: ``var -= learning_rate * grad``."""

from __future__ import annotations

from typing import Any

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.ops import training_ops
from placeviz.graph.variables import Variable
from placeviz.train.optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    def __init__(
        self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent"
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._hyper(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        alpha = self._as_dtype_of(self._learning_rate_tensor, var)
        return training_ops.apply_gradient_descent(var.op.outputs[0], alpha, grad, name=None)
