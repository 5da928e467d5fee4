"""Random tensors (``random_uniform``, ``random_normal``) and the graph-level seed.

Each run draws new values, as in TensorFlow: the kernel keeps the generator the run state hands
out for the op (seeded from the op's ``seed`` attr and the graph's seed) and draws from it on
every call.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from placeviz import dtypes
from placeviz.graph import registry
from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.ops._build import make_op, require_dtype, single
from placeviz.graph.ops.array_ops import static_dims, write_only_cost
from placeviz.graph.registry import OpDef, OutputSpec
from placeviz.graph.shapes import ShapeError, TensorShape

_FLOAT16_STEPS = 2048  # float16 holds every multiple of 1/2048 in [0, 1) exactly


def _supported(allowed: Sequence[dtypes.DType]) -> Mapping[str, frozenset[dtypes.DType]]:
    return {t: frozenset(allowed) for t in registry.DEVICE_TYPES}


def _draw_dtype(dtype: dtypes.DType) -> Any:
    """NumPy's generators make no float16: draw float32 and cast."""
    return dtypes.float32.np if dtype is dtypes.float16 else dtype.np


def _check_seed(seed: Any) -> int | None:
    if seed is None:
        return None
    if not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int or None, got {seed!r}")
    return int(seed)


def _check_number(value: Any, what: str) -> Any:
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{what} must be a Python number, got {value!r}")
    return value


# -- RandomUniform -----------------------------------------------------------------------------
def _infer_uniform(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    dtype = attrs["dtype"]
    require_dtype("RandomUniform", dtype, dtypes.NUMBERS)
    low, high = attrs["minval"], attrs["maxval"]
    if dtype.is_integer:
        info = np.iinfo(dtype.np)
        for what, value in (("minval", low), ("maxval", high)):
            if not isinstance(value, numbers.Integral):
                raise TypeError(f"{what} must be an integer for dtype {dtype.name}, got {value!r}")
            if not info.min <= value <= info.max:
                raise ShapeError(f"{what} {value} is out of range for dtype {dtype.name}")
        if low >= high:
            raise ShapeError(f"Need minval < maxval, got {low} >= {high}")
    return single(TensorShape(attrs["shape"]), dtype)


def _uniform_kernel(xp: Any, op: Operation, state: Any) -> Any:
    gen = state.rng(op)
    shape = op.attrs["shape"]
    low, high = op.attrs["minval"], op.attrs["maxval"]
    dtype = op.outputs[0].dtype
    out = dtype.np
    if dtype.is_integer:
        return lambda: gen.integers(low, high, size=shape, dtype=out)
    draw = _draw_dtype(dtype)
    span = high - low
    if dtype is not dtypes.float16:

        def uniform() -> Any:
            values = gen.random(shape, dtype=draw)
            values *= span
            values += low
            return values

        return uniform

    def uniform_half() -> Any:
        # float32 values just below 1 would round up to 1.0 in float16: keep [0, 1) half-open.
        values = gen.random(shape, dtype=draw)
        values *= _FLOAT16_STEPS
        xp.floor(values, out=values)
        values *= span / _FLOAT16_STEPS
        values += low
        return values.astype(out)

    return uniform_half


registry.register(
    OpDef(
        type="RandomUniform",
        infer=_infer_uniform,
        kernel=_uniform_kernel,
        cost=lambda op, ins, outs: write_only_cost(op, ins, outs, flops_per_element=4.0),
        supported=_supported(dtypes.NUMBERS),
        stateful=True,
    )
)


def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Values in [minval, maxval); integer dtypes need an explicit ``maxval`` (TF's rule)."""
    target = dtypes.as_dtype(dtype)
    if maxval is None:
        if target.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {target.name}")
        maxval = 1
    attrs = {
        "shape": static_dims(shape),
        "dtype": target,
        "minval": _check_number(minval, "minval"),
        "maxval": _check_number(maxval, "maxval"),
        "seed": _check_seed(seed),
    }
    return make_op("RandomUniform", [], name or "random_uniform", attrs).outputs[0]


# -- RandomStandardNormal ----------------------------------------------------------------------
def _infer_normal(inputs: Sequence[Tensor], attrs: Mapping[str, Any]) -> list[OutputSpec]:
    require_dtype("RandomStandardNormal", attrs["dtype"], dtypes.FLOATS)
    return single(TensorShape(attrs["shape"]), attrs["dtype"])


def _normal_kernel(xp: Any, op: Operation, state: Any) -> Any:
    gen = state.rng(op)
    shape = op.attrs["shape"]
    mean, stddev = op.attrs["mean"], op.attrs["stddev"]
    dtype = op.outputs[0].dtype
    draw, out = _draw_dtype(dtype), dtype.np

    def normal() -> Any:
        values = gen.standard_normal(shape, dtype=draw)
        values *= stddev
        values += mean
        return values.astype(out, copy=False)

    return normal


registry.register(
    OpDef(
        type="RandomStandardNormal",
        infer=_infer_normal,
        kernel=_normal_kernel,
        cost=lambda op, ins, outs: write_only_cost(op, ins, outs, flops_per_element=16.0),
        supported=_supported(dtypes.FLOATS),
        stateful=True,
    )
)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: int | None = None,
    name: str | None = None,
) -> Tensor:
    """One op draws, scales by ``stddev`` and shifts by ``mean`` (TF builds three)."""
    attrs = {
        "shape": static_dims(shape),
        "dtype": dtypes.as_dtype(dtype),
        "mean": _check_number(mean, "mean"),
        "stddev": _check_number(stddev, "stddev"),
        "seed": _check_seed(seed),
    }
    return make_op("RandomStandardNormal", [], name or "random_normal", attrs).outputs[0]


def set_random_seed(seed: int | None) -> None:
    """The graph-level seed: with it, ops without their own seed repeat across sessions."""
    get_default_graph().seed = _check_seed(seed)
