"""TF1's learning-rate schedules (``tf.compat.v1.train.*_decay``), built as TensorFlow 2.21 builds
them in a graph: the Keras schedule objects called once on the global step, each in its own name
scope (``ExponentialDecay``, ``PiecewiseConstant``, ``PolynomialDecay``), op for op.

``piecewise_constant`` differs in one way: TensorFlow picks the value with ``tf.case`` (Switch and
Merge ops, which placeviz does not have); placeviz selects it with a chain of SelectV2 ops in the
same ``case`` scope, which gives the same value for every step.
"""

from __future__ import annotations

import functools
from typing import Any

from placeviz import dtypes
from placeviz.graph.control_flow_case import case
from placeviz.graph.core import Tensor, get_default_graph
from placeviz.graph.ops import array_ops, math_ops
from placeviz.graph.ops._build import make_op
from placeviz.graph.ops.constant_op import convert_to_tensor


def exponential_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    decay_rate: Any,
    staircase: bool = False,
    name: str | None = None,
) -> Tensor:
    """``learning_rate * decay_rate ** (global_step / decay_steps)``, the exponent floored when
    ``staircase``."""
    with get_default_graph().name_scope(name or "ExponentialDecay") as scope:
        initial = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = initial.dtype
        steps = scoped_cast(decay_steps, dtype)
        rate = scoped_cast(decay_rate, dtype)
        p = scoped_cast(global_step, dtype) / steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(initial, math_ops.pow(rate, p), name=scope)


def polynomial_decay(
    learning_rate: Any,
    global_step: Any,
    decay_steps: Any,
    end_learning_rate: Any = 0.0001,
    power: Any = 1.0,
    cycle: bool = False,
    name: str | None = None,
) -> Tensor:
    """``(learning_rate - end) * (1 - step / decay_steps) ** power + end``, the step held at
    ``decay_steps``; with ``cycle`` the horizon grows to the next multiple of ``decay_steps``."""
    graph = get_default_graph()
    with graph.name_scope(name or "PolynomialDecay") as scope:
        initial = convert_to_tensor(learning_rate, name="initial_learning_rate")
        dtype = initial.dtype
        end = scoped_cast(end_learning_rate, dtype)
        exponent = scoped_cast(power, dtype)
        step = scoped_cast(global_step, dtype)
        horizon = scoped_cast(decay_steps, dtype)
        if cycle:
            # The first multiple of decay_steps past the step; 1 at step 0.
            at_start = math_ops.equal(step, 0)
            periods = math_ops.ceil(step / decay_steps)
            multiplier = math_ops.where_v2(at_start, 1.0, periods)
            horizon = math_ops.multiply(horizon, multiplier)
        else:
            step = math_ops.minimum(step, horizon)
        p = math_ops.divide(step, horizon)
        decayed = math_ops.multiply(initial - end, math_ops.pow(1 - p, exponent))
        return math_ops.add(decayed, end, name=scope)


def piecewise_constant(x: Any, boundaries: Any, values: Any, name: str | None = None) -> Tensor:
    """``values[0]`` while ``x <= boundaries[0]``, ``values[i]`` while ``boundaries[i-1] < x <=
    boundaries[i]``, ``values[-1]`` past the last boundary."""
    bounds = [convert_to_tensor(b) for b in _flat(boundaries)]
    levels = [convert_to_tensor(v) for v in _flat(values)]
    step = convert_to_tensor(x)
    for i, bound in enumerate(bounds):
        if bound.dtype is not step.dtype.base_dtype:
            if bound.dtype is not dtypes.int32 or step.dtype.base_dtype is not dtypes.int64:
                raise ValueError(
                    f"Boundaries ({bound.dtype.name}) must have the same dtype as x "
                    f"({step.dtype.base_dtype.name})."
                )
            bounds[i] = array_ops.cast(bound, dtypes.int64)
    for level in levels[1:]:
        if level.dtype is not levels[0].dtype:
            raise ValueError(
                f"Values must have elements all with the same dtype ({levels[0].dtype.name} vs "
                f"{level.dtype.name})."
            )
    if len(bounds) != len(levels) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    graph = get_default_graph()
    with graph.name_scope(name or "PiecewiseConstant"):
        # TF's predicates, in its order; exactly one holds for any step, which case asserts.
        pairs = [(step <= bounds[0], levels[0]), (step > bounds[-1], levels[-1])]
        for low, high, level in zip(bounds[:-1], bounds[1:], levels[1:-1]):
            pairs.append(((step > low) & (step <= high), level))
        branches = [(predicate, functools.partial(_identity, level)) for predicate, level in pairs]
        return case(branches, functools.partial(_identity, levels[0]), exclusive=True)


def _identity(value: Tensor) -> Tensor:
    """A case branch's result: a value made outside it (cond reads it through a Switch)."""
    return value


def scoped_cast(value: Any, dtype: dtypes.DType, name: str = "Cast") -> Tensor:
    """TF's ``math_ops.cast`` naming: a ``Cast`` scope whose Python value is ``Cast/x``; a value
    already of ``dtype`` makes no op but still takes the scope's name."""
    graph = get_default_graph()
    with graph.name_scope(name) as scope:
        tensor = convert_to_tensor(value, name="x")
        if tensor.dtype.base_dtype is dtype:
            return tensor
        return make_op("Cast", [tensor], scope, {"dtype": dtype}).outputs[0]


def _flat(items: Any) -> list[Any]:
    return list(items) if isinstance(items, list | tuple) else [items]
