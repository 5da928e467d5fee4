"""TF1's ``ExponentialMovingAverage``: a shadow variable per averaged value, beside it, updated by
``shadow -= (shadow - value) * (1 - decay)`` (``AssignMovingAvg``), as TensorFlow 2.21 builds it.

A variable's shadow starts at the variable's value, read as TensorFlow reads it: through
``initialized_value()``, a ``cond`` on ``IsVariableInitialized`` that takes the variable's value
once it has one and its initial value before (so both may be initialized in one run,
``global_variables_initializer``). A tensor's shadow starts at zeros; with
``zero_debias`` its average is divided by ``1 - decay^t`` as TensorFlow's is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placeviz import dtypes
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.initializers import Zeros
from placeviz.graph.ops import array_ops, math_ops, state_ops
from placeviz.graph.ops.constant_op import convert_to_tensor
from placeviz.graph.variable_scope import get_variable, variable_scope
from placeviz.graph.variables import (
    Variable,
    global_variables,
    trainable_variables,
    without_variable_creators,
)
from placeviz.train.learning_rate_decay import scoped_cast
from placeviz.train.optimizer import _colocated_variable

Averaged = Variable | Tensor


class ExponentialMovingAverage:
    """Shadow copies of variables (or tensors) that ``apply`` moves toward their current values;
    ``num_updates`` lowers the decay early on to ``(1 + n) / (10 + n)``."""

    def __init__(
        self,
        decay: Any,
        num_updates: Any = None,
        zero_debias: bool = False,
        name: str = "ExponentialMovingAverage",
    ) -> None:
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[Averaged, Variable] = {}

    @property
    def name(self) -> str:
        return self._name

    def apply(self, var_list: Sequence[Averaged] | None = None) -> Operation:
        """Create the shadows not made yet and return the op that updates them all."""
        values = list(trainable_variables() if var_list is None else var_list)
        debiased: set[Variable] = set()
        for value in values:
            if value.dtype.base_dtype not in dtypes.FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {value.name}")
            if value in self._averages:
                continue
            if isinstance(value, Variable):
                self._averages[value] = _colocated_variable(
                    value, lambda v=value: v.initial_value, f"{value.op.name}/{self._name}"
                )
                value.graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, value)
            else:
                self._averages[value] = _zeros_shadow(value, self._name)
                if self._zero_debias:
                    debiased.add(self._averages[value])
        graph = get_default_graph()
        with graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = scoped_cast(self._num_updates, dtypes.float32, "num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [
                assign_moving_average(
                    self._averages[v], v, decay, zero_debias=self._averages[v] in debiased
                )
                for v in values
            ]
            return state_ops.group(*updates, name=scope)

    def average(self, var: Averaged) -> Variable | None:
        return self._averages.get(var)

    def average_name(self, var: Averaged) -> str:
        """The shadow's name, or the name ``apply`` would give it."""
        if var in self._averages:
            return self._averages[var].op.name
        return var.graph.unique_name(f"{var.op.name}/{self._name}", mark_as_used=False)

    def variables_to_restore(
        self, moving_avg_variables: Sequence[Variable] | None = None
    ) -> dict[str, Variable]:
        """Checkpoint names to variables: each averaged variable restored from its shadow's
        name, every other global variable from its own."""
        if moving_avg_variables is None:
            averaged = trainable_variables() + moving_average_variables()
        else:
            averaged = list(moving_avg_variables)
        names = {self.average_name(v): v for v in dict.fromkeys(averaged)}
        averaged_names = {v.name for v in averaged}
        for variable in global_variables():
            if variable.name not in averaged_names and variable.op.name not in names:
                names[variable.op.name] = variable
        return names


def moving_average_variables(scope: str | None = None) -> list[Variable]:
    """The variables an ``ExponentialMovingAverage`` averages (TF's collection of them)."""
    return get_default_graph().get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def assign_moving_average(
    variable: Variable,
    value: Any,
    decay: Any,
    zero_debias: bool = True,
    name: str | None = None,
) -> Tensor:
    """``variable -= (variable - value) * (1 - decay)``, one op named ``AssignMovingAvg``; with
    ``zero_debias`` a biased average and a step count beside it correct the start at zero."""
    with get_default_graph().name_scope(name or "AssignMovingAvg") as scope:
        one_minus_decay = 1.0 - decay
        if one_minus_decay.dtype is not variable.dtype.base_dtype:
            one_minus_decay = array_ops.cast(one_minus_decay, variable.dtype.base_dtype)
        if zero_debias:
            return _zero_debias(variable, value, one_minus_decay, scope)
        return state_ops.assign_sub(variable, (variable - value) * one_minus_decay, name=scope)


def _zeros_shadow(tensor: Tensor, name: str) -> Variable:
    """A tensor's shadow: zeros, placed by the placer's usual rules (not beside the tensor)."""
    graph = tensor.graph
    shape, dtype = tensor.shape.as_list(), tensor.dtype.base_dtype
    with graph.as_default(), without_variable_creators(), graph.name_scope(None):
        return Variable(
            lambda: Zeros()(shape, dtype), trainable=False, name=f"{tensor.op.name}/{name}"
        )


def _zero_debias(unbiased: Variable, value: Any, one_minus_decay: Tensor, scope: str) -> Tensor:
    """TF's: ``biased`` takes the plain update, ``local_step`` counts them, and the shadow is
    ``biased / (1 - decay^local_step)``."""
    graph = unbiased.graph
    taken = {v.op.name for v in global_variables()}
    with (
        graph.name_scope(None),
        variable_scope(unbiased.op.name) as outer,
        graph.colocate_with(unbiased.op),
    ):
        biased, local_step = (
            get_variable(
                _unused(name, outer.name, taken),
                shape=shape,
                dtype=unbiased.dtype.base_dtype,
                initializer=Zeros(),
                trainable=False,
            )
            for name, shape in (("biased", unbiased.shape.as_list()), ("local_step", []))
        )
    update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
    update_local_step = local_step.assign_add(1)
    bias_factor = 1 - math_ops.pow(1.0 - one_minus_decay, update_local_step)
    return state_ops.assign(unbiased, update_biased / bias_factor, name=scope)


def _unused(name: str, scope: str, taken: set[str]) -> str:
    """``name``, or ``name_1``, ``name_2``... where ``<scope>/<name>`` is already a variable
    (TF's ``_maybe_get_unique``)."""
    if f"{scope}/{name}" not in taken:
        return name
    index = 1
    while f"{scope}/{name}_{index}" in taken:
        index += 1
    return f"{name}_{index}"
