"""RMSProp with TF1's update rule and state.

``ms = decay ms + (1 - decay) g^2``, ``mom = momentum mom + lr g / sqrt(ms + epsilon)``,
``var -= mom``. Centered, the mean gradient ``mg`` is tracked too and ``ms - mg^2`` (the
variance) replaces ``ms``. The ``rms`` slot starts at ones, as in TensorFlow, so the first steps
are not huge.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from placeviz.graph.core import Operation, Tensor
from placeviz.graph.initializers import Ones
from placeviz.graph.ops import training_ops
from placeviz.graph.variables import Variable
from placeviz.train.optimizer import Optimizer


class RMSPropOptimizer(Optimizer):
    def __init__(
        self,
        learning_rate: Any,
        decay: Any = 0.9,
        momentum: Any = 0.0,
        epsilon: Any = 1e-10,
        use_locking: bool = False,
        centered: bool = False,
        name: str = "RMSProp",
    ) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list: list[Variable]) -> None:
        # TF's order, which numbers the slots' names: w/RMSProp, w/RMSProp_1 (mg), w/RMSProp_2.
        for var in var_list:
            ones = partial(Ones(), var.shape.as_list(), var.dtype.base_dtype)
            self._slot(var, ones, "rms", self._name)
            if self._centered:
                self._zeros_slot(var, "mg", self._name)
            self._zeros_slot(var, "momentum", self._name)

    def _prepare(self) -> None:
        self._learning_rate_tensor = self._hyper(self._learning_rate, "learning_rate")
        self._decay_tensor = self._hyper(self._decay, "decay")
        self._momentum_tensor = self._hyper(self._momentum, "momentum")
        self._epsilon_tensor = self._hyper(self._epsilon, "epsilon")

    def _apply_dense(self, grad: Tensor, var: Variable) -> Operation:
        names = ("mg", "rms", "momentum") if self._centered else ("rms", "momentum")
        slots = [self._slots[name][var] for name in names]
        hypers = (
            self._learning_rate_tensor,
            self._decay_tensor,
            self._momentum_tensor,
            self._epsilon_tensor,
        )
        return training_ops.apply_update(
            "ApplyCenteredRMSProp" if self._centered else "ApplyRMSProp",
            [var.op.outputs[0]]
            + [slot.op.outputs[0] for slot in slots]
            + [self._as_dtype_of(t, var) for t in hypers]
            + [grad],
        )
