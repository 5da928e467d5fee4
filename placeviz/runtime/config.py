"""Session configuration with TensorFlow 1's names: ``ConfigProto`` and ``GPUOptions``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class GPUOptions:
    """How a session uses GPU memory (accounted by the runtime) and which GPUs it sees."""

    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""

    def __post_init__(self) -> None:
        if not 0.0 <= self.per_process_gpu_memory_fraction <= 1.0:
            raise ValueError(
                "per_process_gpu_memory_fraction must be between 0 and 1, got "
                f"{self.per_process_gpu_memory_fraction}"
            )


@dataclass
class ConfigProto:
    """``pv.ConfigProto(log_device_placement=True, allow_soft_placement=True, ...)``."""

    log_device_placement: bool = False
    allow_soft_placement: bool = False
    device_count: dict[str, int] = field(default_factory=dict)
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0
    use_per_session_threads: bool = False


@dataclass
class RunOptions:
    """``pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)``: also record bytes and memory.

    Every run records placements and per-op timings; FULL_TRACE adds each output's size, so
    allocations, frees and transferred bytes are exact.
    """

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    trace_level: int = NO_TRACE


@dataclass
class RunMetadata:
    """Filled by ``Session.run(..., run_metadata=md)``: ``md.trace`` is that run's Trace."""

    trace: Any = None
