"""Adagrad with TF1's update rule and state: ``accum += g^2``, ``var -= lr g / sqrt(accum)``.

The accumulator starts at ``initial_accumulator_value`` (0.1), so the first step divides by a
positive number.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.initializers import Constant
from placeviz.graph.ops import training_ops
from placeviz.graph.variables import Variable
from placeviz.train.optimizer import Optimizer


class AdagradOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        initial_accumulator_value: float = 0.1,
        use_locking: bool = False,
        name: str = "Adagrad",
    ) -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(
                f"initial_accumulator_value must be positive: {initial_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: list[Variable]) -> None:
        fill = Constant(self._initial_accumulator_value)
        for var in var_list:
            start = partial(fill, var.shape.as_list(), var.dtype.base_dtype)
            self._slot(var, start, "accumulator", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._hyper(self._learning_rate, "learning_rate")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        accum = self.get_slot(var, "accumulator")
        assert accum is not None
        return training_ops.apply_update(
            "ApplyAdagrad",
            [
                var.op.outputs[0],
                accum.op.outputs[0],
                self._as_dtype_of(self._learning_rate_tensor, var),
                grad,
            ],
        )
