"""TensorFlow's module-level scope functions, acting on the default graph."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from placeviz.graph.core import get_default_graph


@contextlib.contextmanager
def device(device_name_or_function: Any) -> Iterator[None]:
    """``with pv.device('/gpu:0'):``: a spec string, a DeviceSpec, an op's function, or None."""
    with get_default_graph().device(device_name_or_function):
        yield


@contextlib.contextmanager
def name_scope(
    name: str | None, default_name: str | None = None, values: Any = None
) -> Iterator[str]:
    """TF1's ``name_scope``: None takes ``default_name``; "" (as in TF) resets to the root."""
    with get_default_graph().name_scope(default_name if name is None else name) as scope:
        yield scope


def get_name_scope() -> str:
    return get_default_graph().get_name_scope()


@contextlib.contextmanager
def colocate_with(op: Any, ignore_existing: bool = False) -> Iterator[None]:
    with get_default_graph().colocate_with(op, ignore_existing):
        yield


@contextlib.contextmanager
def control_dependencies(control_inputs: Sequence[Any] | None) -> Iterator[None]:
    with get_default_graph().control_dependencies(control_inputs):
        yield
