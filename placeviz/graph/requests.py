"""How an op's device request is made: the steps that decided it (a device scope, a device
function, a colocation, a set device) and the scopes a graph keeps while ops are created."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from placeviz.devices.spec import DeviceSpec

if TYPE_CHECKING:
    from placeviz.graph.core import Operation

Location = tuple[str, int]


class RequestSource(enum.Enum):
    """How one step of an op's device request arose (the placer phrases each kind once)."""

    DEVICE_SCOPE = "device scope"  # `with device('/gpu:0')`
    DEVICE_FUNCTION = "device function"  # `with device(fn)`: what fn returned for the op
    COLOCATE_WITH = "colocate_with"  # copied from the colocation target's request
    SET_DEVICE = "set device"  # op._set_device(...)


class RequestStep(NamedTuple):
    """One step that decided an op's request: its kind, what it named (the scope's string, the
    function's name, the colocation target's name) and the user's line; a device function's
    ``detail`` says, when asked at placement, how it chose (replica_device_setter's round robin)."""

    source: RequestSource
    text: str
    location: Location
    detail: Callable[[], str | None] | None = None


class DeviceScope:
    __slots__ = ("location", "source", "spec_or_fn", "text")

    def __init__(self, spec_or_fn: Any, location: Location) -> None:
        self.location = location
        if spec_or_fn is None or callable(spec_or_fn):
            self.spec_or_fn = spec_or_fn
            self.source = RequestSource.DEVICE_FUNCTION
            self.text = getattr(spec_or_fn, "__name__", repr(spec_or_fn))
        else:
            # A scope takes a DeviceSpec by its name, as TF's does: an index without a type,
            # which the name leaves out, is no request.
            given = spec_or_fn.to_string() if isinstance(spec_or_fn, DeviceSpec) else spec_or_fn
            self.spec_or_fn = DeviceSpec.coerce(given)
            self.source = RequestSource.DEVICE_SCOPE
            self.text = spec_or_fn if isinstance(spec_or_fn, str) else self.spec_or_fn.to_string()


class ControlDependencies:
    __slots__ = ("created", "deps")

    def __init__(self, deps: list[Operation]) -> None:
        self.deps = deps
        self.created: set[int] = set()


class NamedGroup:
    """A colocation target known by name only: it adds its group and requests no device."""

    def __init__(self, op_name: str) -> None:
        self._group = f"loc:@{op_name}"
        self._requested = DeviceSpec()
        self._device_scopes: tuple[RequestStep, ...] = ()

    def colocation_groups(self) -> list[str]:
        return [self._group]
