"""Session configuration with TensorFlow 1's names: ``ConfigProto`` and ``GPUOptions``."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any


def _check_field_types(message: Any) -> None:
    """Each field takes its default's kind of value, as a protobuf field does: a wrong type is a
    TypeError naming the field, not an AttributeError deep inside a later run."""
    for spec in fields(message):
        value = getattr(message, spec.name)
        default = spec.default if spec.default is not MISSING else spec.default_factory()  # type: ignore[misc]
        where = f"{type(message).__name__}.{spec.name}"
        if isinstance(default, dict):
            if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and _is_int(v) for k, v in value.items()
            ):
                raise TypeError(f"{where} must map device type names to ints, got {value!r}")
        elif isinstance(default, bool | int):
            if not _is_int(value):
                kind = type(default).__name__
                raise TypeError(f"{where} must be a {kind}, got {type(value).__name__} {value!r}")
        elif isinstance(default, float):
            if not isinstance(value, numbers.Real) or isinstance(value, bool):
                raise TypeError(f"{where} must be a number, got {type(value).__name__} {value!r}")
        elif not isinstance(value, type(default)):
            raise TypeError(
                f"{where} must be a {type(default).__name__}, got {type(value).__name__} {value!r}"
            )


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral)


@dataclass
class GPUOptions:
    """How a session uses GPU memory (accounted by the runtime) and which GPUs it sees."""

    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""

    def __post_init__(self) -> None:
        _check_field_types(self)
        if not 0.0 <= self.per_process_gpu_memory_fraction <= 1.0:
            raise ValueError(
                "per_process_gpu_memory_fraction must be between 0 and 1, got "
                f"{self.per_process_gpu_memory_fraction}"
            )


PLACERS = ("simple", "cost")  # TensorFlow's; the whitepaper's cost model (placement/cost_placer)


@dataclass
class ConfigProto:
    """``pv.ConfigProto(log_device_placement=True, allow_soft_placement=True, ...)``;
    ``placer="cost"`` turns on the cost-model placer, ``dry_run=True`` makes every run dry."""

    log_device_placement: bool = False
    allow_soft_placement: bool = False
    device_count: dict[str, int] = field(default_factory=dict)
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0
    use_per_session_threads: bool = False
    # Not TensorFlow's: "cost" places what asked for no device by simulating the graph.
    placer: str = "simple"
    # Not TensorFlow's: every run is a dry run (RunOptions.dry_run).
    dry_run: bool = False

    def __post_init__(self) -> None:
        _check_field_types(self)
        if self.placer not in PLACERS:
            raise ValueError(
                f"ConfigProto.placer must be one of {', '.join(map(repr, PLACERS))}, "
                f"got {self.placer!r}"
            )


@dataclass
class RunOptions:
    """``pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)``: also record bytes and memory.

    Every run records placements and per-op timings; FULL_TRACE adds each output's size, so
    allocations, frees and transferred bytes are exact. ``dry_run=True`` (not TensorFlow's)
    computes and allocates nothing: fetches come back as ``pv.ShapedArray``, every op is timed
    by its device's profile and memory is checked from sizes (runtime/dry_run.py).
    """

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    trace_level: int = NO_TRACE
    dry_run: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.trace_level, str):
            raise ValueError(
                f"RunOptions.trace_level: unknown enum label {self.trace_level!r}; use "
                "pv.RunOptions.NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE or FULL_TRACE"
            )
        _check_field_types(self)


@dataclass
class RunMetadata:
    """Filled by ``Session.run(..., run_metadata=md)``: ``md.trace`` is that run's Trace."""

    trace: Any = None
