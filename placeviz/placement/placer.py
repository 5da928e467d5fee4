"""TensorFlow's simple placer, with a reason for every decision.

Rules (shared/reference/tf-placement-semantics.md): an op placed in an earlier run of the same
session keeps its device; otherwise a pinned op goes where pinned, unset fields completed;
otherwise GPU:0 when it has a GPU kernel for its dtype, else CPU:0. Colocation groups are placed
together. Soft placement relaxes the device type and id, never the job or task.

Every check for a group runs before anything is recorded, so a failed placement changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from placeviz.devices.context import Device
from placeviz.devices.spec import DeviceSpec
from placeviz.errors import InvalidArgumentError
from placeviz.graph.core import Operation
from placeviz.placement import reason as R
from placeviz.placement.colocation import colocation_groups, inherited_request, merged_request
from placeviz.placement.reason import Reason, short_name, where

_SOFT_HINT = (
    "To let placeviz choose a supported device instead, use "
    "pv.ConfigProto(allow_soft_placement=True) or pv.config.set_soft_device_placement(True)."
)


class Placement(Mapping[str, str]):
    """``sess.placement``: op name -> assigned device (full name), read-only, with ``explain``."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Device, Reason]] = {}

    def __getitem__(self, name: str) -> str:
        return self._entry(name)[0].name

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def explain(self, name: str) -> Reason:
        """Why ``name`` runs where it does."""
        return self._entry(getattr(name, "name", name))[1]

    def device(self, name: str) -> Device:
        return self._entry(name)[0]

    def _entry(self, name: str) -> tuple[Device, Reason]:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(
                f"'{name}' has not been placed in this session (ops are placed at the first "
                "Session.run after they are created)"
            ) from None

    def __repr__(self) -> str:
        lines = ", ".join(f"{k!r}: {short_name(v[0].name)!r}" for k, v in self._entries.items())
        return f"Placement({{{lines}}})"


class PlacementFailure:
    """A group that could not be placed; raised only when a run needs one of its ops."""

    __slots__ = ("error", "members")

    def __init__(self, error: InvalidArgumentError, members: Sequence[Operation]) -> None:
        self.error = error
        self.members = members


class SimplePlacer:
    """Places the ops of one graph onto one session's devices."""

    def __init__(self, devices: Sequence[Device], soft: bool) -> None:
        self.devices = sorted(devices, key=lambda d: d.spec.sort_key())
        self.soft = soft

    def place(
        self, ops: Sequence[Operation], placement: Placement
    ) -> tuple[list[tuple[Operation, Device, Reason]], dict[int, PlacementFailure]]:
        """Decide every op of ``ops`` (a whole graph) not yet in ``placement``.

        Returns the decisions in creation order and, by op id, the groups that failed.
        """
        decisions: list[tuple[Operation, Device, Reason]] = []
        failures: dict[int, PlacementFailure] = {}
        placed = placement._entries
        for members in colocation_groups(ops):
            new = [op for op in members if op.name not in placed]
            if not new:
                continue
            try:
                decisions.extend(self._place_group(members, new, placement))
            except InvalidArgumentError as error:
                failure = PlacementFailure(error, new)
                for op in new:
                    failures[op._id] = failure
        decisions.sort(key=lambda d: d[0]._id)
        return decisions, failures

    # -- one group ---------------------------------------------------------------------------
    def _place_group(
        self, members: list[Operation], new: list[Operation], placement: Placement
    ) -> list[tuple[Operation, Device, Reason]]:
        earlier = next((op for op in members if op.name in placement._entries), None)
        if earlier is not None:
            device = placement.device(earlier.name)
            text = (
                f"kept on {short_name(device.name)} with '{earlier.name}': an earlier run of this "
                "session placed its colocation group there (placements stick within a session)"
            )
            return [
                (op, device, Reason(R.STICKY, text, device.name, op.device, earlier.name))
                for op in new
            ]
        spec, anchor = merged_request(members, self.soft)
        supported = self._supported_types(members)
        anchor = anchor or members[0]
        if spec.is_empty:
            device, kind, text = self._default(members, supported)
        else:
            device, kind, text = self._requested(spec, anchor, members, supported)
        anchor_reason = Reason(kind, text, device.name, anchor.device)
        result = []
        for op in new:
            if op is anchor:
                result.append((op, device, anchor_reason))
            elif _asked_itself(op) and kind == R.PINNED:
                own = self._pinned_text(op, spec, device)
                result.append((op, device, Reason(R.PINNED, own, device.name, op.device)))
            else:
                text = (
                    f"colocated with '{anchor.name}' ({anchor.type}), which is {anchor_reason.text}"
                )
                result.append(
                    (op, device, Reason(R.COLOCATED, text, device.name, op.device, anchor.name))
                )
        return result

    def _supported_types(self, members: Sequence[Operation]) -> set[str]:
        types = {d.device_type for d in self.devices}
        return {t for t in types if all(op.op_def.supports(t, op.dtype) for op in members)}

    def _default(
        self, members: Sequence[Operation], supported: set[str]
    ) -> tuple[Device, str, str]:
        candidates = [d for d in self.devices if d.device_type in supported]
        if not candidates:
            op = members[0]
            raise InvalidArgumentError(
                f"No device of this session has a kernel for {_kernel_name(op)} "
                f"('{op.name}', created at {op.source}). Available devices: {self._names()}",
                op=op,
            )
        device = candidates[0]
        short = short_name(device.name)
        has_gpu = any(d.device_type == "GPU" for d in self.devices)
        if device.device_type == "GPU":
            what = _group_kernels(members)
            return (
                device,
                R.DEFAULT,
                f"no device requested, so {short}, the first GPU, which has {what}",
            )
        if not has_gpu:
            return device, R.DEFAULT, f"no device requested and this session has no GPU, so {short}"
        limiting = _first_unsupported(members, "GPU")
        return (
            device,
            R.DEFAULT,
            f"no device requested and there is no GPU kernel for {_kernel_name(limiting)}, "
            f"so {short}",
        )

    def _requested(
        self, spec: DeviceSpec, anchor: Operation, members: Sequence[Operation], supported: set[str]
    ) -> tuple[Device, str, str]:
        matching = [d for d in self.devices if spec.matches(d.spec)]
        usable = [d for d in matching if d.device_type in supported]
        if usable:
            return usable[0], R.PINNED, self._pinned_text(anchor, spec, usable[0])
        if self.soft:
            relaxed = spec.replace(device_type=None, device_index=None)
            candidates = [
                d for d in self.devices if d.device_type in supported and relaxed.matches(d.spec)
            ]
            if candidates:
                device = candidates[0]
                short = short_name(device.name)
                if not matching:
                    why = f"{spec} does not exist"
                    first = f"the first {device.device_type} with {_group_kernels(members)}"
                    return device, R.SOFT, f"soft placement: {why}, so {short}, {first}"
                limiting = _first_unsupported(members, spec.device_type or "")
                why = f"there is no {spec.device_type} kernel for {_kernel_name(limiting)}"
                return device, R.SOFT, f"soft placement: {why}, so {short}"
        raise self._unsatisfiable(spec, anchor, members, matching)

    def _unsatisfiable(
        self,
        spec: DeviceSpec,
        anchor: Operation,
        members: Sequence[Operation],
        matching: Sequence[Device],
    ) -> InvalidArgumentError:
        head = (
            f"Cannot assign a device for operation '{anchor.name}' ({anchor.type}, created at "
            f"{anchor.source}): Could not satisfy explicit device specification '{spec}' because"
        )
        group = ""
        if len(members) > 1:
            group = f" Its colocation group: {', '.join(op.name for op in members)}."
        if matching:
            limiting = _first_unsupported(members, spec.device_type or "")
            return InvalidArgumentError(
                f"{head} no supported kernel for {spec.device_type} devices is available "
                f"({_kernel_name(limiting)} has kernels for "
                f"{', '.join(_kernel_types(limiting)) or 'no device type'}).{group} "
                f"Available devices: {self._names()}. {_SOFT_HINT}",
                op=anchor,
            )
        local = self.devices[0].spec if self.devices else DeviceSpec()
        remote = ""
        if (spec.job is not None and spec.job != local.job) or (
            spec.task is not None and spec.task != local.task
        ):
            remote = (
                f" This process is /job:{local.job}/replica:{local.replica}/task:{local.task}; "
                "placeviz does not run on a cluster yet, so other jobs and tasks have no devices."
            )
        return InvalidArgumentError(
            f"{head} no devices matching that specification are registered in this process; "
            f"available devices: {self._names()}.{remote}{group} {_SOFT_HINT}",
            op=anchor,
        )

    def _pinned_text(self, op: Operation, spec: DeviceSpec, device: Device) -> str:
        text = f"pinned by {scope_phrase(op)}"
        if spec.device_type is None or spec.device_index is None:
            text += (
                f"; {short_name(device.name)} is the first device matching '{spec}' with "
                f"a kernel for {_kernel_name(op)}"
            )
        return text

    def _names(self) -> str:
        return ", ".join(d.name for d in self.devices)


def scope_phrase(op: Operation) -> str:
    """How the user asked for the op's device, with the line where they did."""
    if not op._device_scopes:
        return f"its requested device '{op.device}'"
    display, location = op._device_scopes[0]
    if display.startswith("'"):
        phrase = f"`with device({display})` at {where(location)}"
    elif display.startswith("colocate_with"):
        phrase = f"`with {display}` at {where(location)}"
    elif display == "op._set_device":
        phrase = f"op._set_device at {where(location)}"
    else:
        phrase = (
            f"device function {display} (scope at {where(location)}), which returned '{op.device}'"
        )
    if len(op._device_scopes) > 1:
        phrase += f", merged with outer scopes into '{op.device}'"
    return phrase


def _asked_itself(op: Operation) -> bool:
    """Did the op's own device scope pin it (rather than inheriting a colocation target's)?"""
    return not op.requested_device.is_empty and not inherited_request(op)


def _kernel_name(op: Operation) -> str:
    dtype = op.dtype
    return f"{op.type}({dtype.name if dtype is not None else 'any'})"


def _kernel_types(op: Operation) -> list[str]:
    return [t for t in ("GPU", "CPU") if op.op_def.supports(t, op.dtype)]


def _first_unsupported(members: Sequence[Operation], device_type: str) -> Operation:
    for op in members:
        if not op.op_def.supports(device_type, op.dtype):
            return op
    return members[0]


def _group_kernels(members: Sequence[Operation]) -> str:
    if len(members) == 1:
        return f"a kernel for {_kernel_name(members[0])}"
    return f"kernels for all {len(members)} ops of the colocation group of '{members[0].name}'"
