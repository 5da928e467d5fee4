"""Runs on devices of other processes: what a session on a target hands its plans to.

A session on ``""`` runs its plans here; a session on a target (``grpc://host:port``) hands each
run to a ``RemoteRunner`` for the target's scheme. Runners register themselves by scheme from
above the runtime (the package's ``__init__`` names the cluster's), so the runtime never imports
what serves a target: the layers stay one way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from placeviz.devices.context import Device
from placeviz.devices.spec import DeviceSpec
from placeviz.graph.core import Graph, Operation
from placeviz.runtime.plan import Plan


@dataclass(frozen=True)
class RemoteEvents:
    """A remote run's events: how many, and how to make them the recorder's columns (on this
    process's clock and device ids). The recorder makes them when they are first read
    (``Recorder.extend_later``), so a step's reports cost the client only their count until a
    trace or a view reads them."""

    count: int
    build: Callable[[], dict[str, np.ndarray]]

    @staticmethod
    def none() -> RemoteEvents:
        return RemoteEvents(0, dict)


@dataclass
class RemoteResult:
    """A remote run: the values fetched (by ``id`` of their tensor) and its events."""

    values: dict[int, Any]
    events: RemoteEvents


class RemoteRunFailed(Exception):
    """A remote run that failed: the error to raise, and the events its processes recorded
    until it did, so the trace keeps them."""

    def __init__(self, error: BaseException, events: RemoteEvents) -> None:
        super().__init__(error)
        self.error = error
        self.events = events


class RemoteRunner(Protocol):
    """The devices behind a target, and runs of plans on them."""

    devices: Sequence[Device]
    local_task: DeviceSpec  # the task a session's unpinned ops go to
    # processes the target names that do not run: '/job:ps/task:1' -> its address (an op
    # placed there fails with UnavailableError, naming both)
    missing_tasks: Mapping[str, str]

    def run(
        self,
        plan: Plan,
        feed_values: Sequence[Any],
        graph: Graph,
        device_of: Callable[[Operation], str],
        full_trace: bool,
        device_ids: Mapping[str, int],
    ) -> RemoteResult: ...

    def process_of(self, device: Device) -> tuple[int, str]:
        """The pid and host:port of the process that runs ``device``'s ops."""
        ...

    def reset(self) -> None:
        """Every process behind the target forgets its variables (``Session.reset``)."""
        ...

    def close(self) -> None: ...


# scheme -> 'module:callable' making the runner of a target of that scheme
_RUNNERS: dict[str, str] = {}


def register_runner(schemes: Sequence[str], opener: str) -> None:
    """Targets ``scheme://...`` are run by ``opener`` ('module:callable', imported when first
    needed, so an optional dependency is not imported before a session asks for it)."""
    for scheme in schemes:
        _RUNNERS[scheme] = opener


def open_runner(target: str) -> RemoteRunner:
    scheme = target.partition("://")[0]
    opener = _RUNNERS.get(scheme)
    if opener is None:
        known = ", ".join(f"{s}://host:port" for s in sorted(_RUNNERS))
        raise ValueError(f"Session target {target!r} must be '' (this process) or one of {known}")
    module, _, name = opener.partition(":")
    runner: RemoteRunner = getattr(importlib.import_module(module), name)(target)
    return runner
