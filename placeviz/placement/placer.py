"""TensorFlow's simple placer, with a reason for every decision.

Rules (shared/reference/tf-placement-semantics.md): an op placed in an earlier run of the same
session keeps its device; otherwise a pinned op goes where pinned, unset fields completed;
otherwise GPU:0 when it has a GPU kernel for its dtype, else CPU:0. Colocation groups are placed
together. Soft placement relaxes the device type and id, never the job or task. Among the devices
a group may take, TensorFlow's heuristics (core/common_runtime/placer.cc) may pick another than
the first: metadata ops and lone Identities follow their input, generators their consumers.

Every check for a group runs before anything is recorded, so a failed placement changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from placeviz.contract import ReasonKind
from placeviz.devices.context import Device
from placeviz.devices.spec import DeviceSpec
from placeviz.errors import InvalidArgumentError, OpError, UnavailableError
from placeviz.graph.core import Operation, RequestSource
from placeviz.placement.colocation import (
    ColocationIndex,
    inherited_request,
    merged_request,
    reference_overrides,
)
from placeviz.placement.reason import Reason, short_name, where

_SOFT_HINT = (
    "To let placeviz choose a supported device instead, use "
    "pv.ConfigProto(allow_soft_placement=True) or pv.config.set_soft_device_placement(True)."
)


class Placement(Mapping[str, str]):
    """``sess.placement``: op name -> assigned device (full name), read-only, with ``explain``."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Device, Reason]] = {}
        # Op id -> when the cost placer's schedule starts it: plans run ops in that order, the
        # order the placement was chosen for (empty under the simple placer: creation order).
        self.schedule_order: dict[int, float] = {}

    def __getitem__(self, name: str) -> str:
        return self._entry(name)[0].name

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def explain(self, name: str) -> Reason:
        """Why ``name`` runs where it does."""
        return self._entry(getattr(name, "name", name))[1]

    def device(self, name: str) -> Device:
        return self._entry(name)[0]

    def decision(self, name: str) -> tuple[Device, Reason] | None:
        """Where ``name`` runs and why, or None where it is not placed (no error)."""
        return self._entries.get(name)

    def record(self, op: Operation, device: Device, reason: Reason) -> None:
        """The placer's decision for ``op`` (each op is placed once)."""
        self._entries[op.name] = (device, reason)

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

    def __init__(self, error: OpError, members: Sequence[Operation]) -> None:
        self.error = error
        self.members = members


@dataclass
class PlacementGroup:
    """One colocation group on its way to a device: where it may go, and who decided."""

    new: list[Operation]  # the members not placed yet
    candidates: list[Device]  # the devices the group may take, preferred first
    kind: str  # how candidates[0] was chosen: pinned, default or soft
    text: str
    anchor: Operation  # the member whose request the group follows (the first, if none asked)
    spec: DeviceSpec  # the members' merged request
    device: Device | None = None
    decider: Operation | None = None
    reason: Reason | None = None


class SimplePlacer:
    """Places the ops of one graph onto one session's devices."""

    def __init__(
        self, devices: Sequence[Device], soft: bool, local: DeviceSpec | None = None
    ) -> None:
        """``local``: the session's own task in a cluster. As in TensorFlow, a request that
        names no job is a request on that task, and an op with no request goes there."""
        self.devices = sorted(devices, key=lambda d: d.spec.sort_key())
        self.soft = soft
        self.local = local
        self._local_devices = [d for d in self.devices if local is None or local.matches(d.spec)]
        # Tasks of the session's cluster that do not run ('/job:ps/task:1' -> its address in
        # the cluster spec): a request for one fails with UnavailableError, not as unknown.
        self.missing_tasks: Mapping[str, str] = {}

    def place(
        self, ops: Sequence[Operation], placement: Placement, index: ColocationIndex | None = None
    ) -> tuple[list[tuple[Operation, Device, Reason]], dict[int, PlacementFailure]]:
        """Decide every op of ``ops`` not yet in ``placement``.

        ``index`` holds the colocation groups of every op made so far, so ``ops`` need only be
        the ones to decide; without it ``ops`` must be the whole graph. As TensorFlow's placer,
        ops are decided one at a time in creation order, and generators (no inputs, one output)
        after all the others, so that their consumers are placed first. Returns the decisions
        in creation order and, by op id, the groups that failed.
        """
        if index is None:
            index = ColocationIndex()
            index.add(ops)
        decisions: list[tuple[Operation, Device, Reason]] = []
        failures: dict[int, PlacementFailure] = {}
        placed = placement
        groups: dict[int, list[Operation]] = {}  # first member's id -> the group
        for op in ops:
            if op.name not in placed and op.id not in groups:
                members = index.group(op)
                for member in members:
                    groups[member.id] = members
        involved = sorted({id(m): m for m in groups.values()}.values(), key=lambda m: m[0].id)
        ordered = sorted((op for members in involved for op in members), key=lambda o: o.id)
        overrides = reference_overrides(ordered, index.group)
        group_of: dict[int, PlacementGroup] = {}
        for members in involved:
            new = [op for op in members if op.name not in placed]
            earlier = next((op for op in members if op.name in placed), None)
            if earlier is not None:
                decisions.extend(_sticky(earlier, new, placement))
                continue
            try:
                group = self._group(members, new, overrides)
            except (InvalidArgumentError, UnavailableError) as error:
                failure = PlacementFailure(error, new)
                for op in new:
                    failures[op.id] = failure
                continue
            for op in members:
                group_of[op.id] = group

        def device_of(op: Operation) -> Device | None:
            if op.name in placed:
                return placement.device(op.name)
            group = group_of.get(op.id)
            return group.device if group is not None else None

        self._choose(ordered, group_of, device_of)
        done: set[int] = set()
        for group in group_of.values():
            if id(group) not in done and group.new[0].id not in failures:
                done.add(id(group))
                decisions.extend(self._member_decisions(group, overrides))
        decisions.sort(key=lambda d: d[0].id)
        return decisions, failures

    def _choose(
        self,
        ordered: Sequence[Operation],
        group_of: Mapping[int, PlacementGroup],
        device_of: DeviceOf,
    ) -> None:
        """Give each group of ``group_of`` a device among its candidates: its first, unless one
        of TensorFlow's heuristics says otherwise for the member that decides it."""
        consumers = consumers_by_producer(ordered)
        generators = [op for op in ordered if op.id in group_of and is_generator(op)]
        first_pass = [op for op in ordered if op.id in group_of and not is_generator(op)]
        for op in first_pass:
            group = group_of[op.id]
            if group.device is None:
                _decide(group, op, _follow_input(op, group, consumers, device_of))
        for op in generators:
            group = group_of[op.id]
            if group.device is None:
                _decide(group, op, _follow_consumers(op, group, consumers, device_of))

    # -- one group ---------------------------------------------------------------------------
    def _group(
        self, members: list[Operation], new: list[Operation], overrides: dict[int, Operation]
    ) -> PlacementGroup:
        """The group's candidate devices; raises when it has none."""
        for op in members:
            problem = op.requested_device.runtime_problem()
            if problem is not None:
                raise InvalidArgumentError(
                    f"Malformed device specification '{op.device}' in node '{op.name}' "
                    f"({op.type}, created at {op.source}): {problem}",
                    op=op,
                )
        spec, anchor = merged_request(members, self.soft, overrides)
        supported = self._supported_types(members)
        anchor = anchor or members[0]
        if self.local is not None and not spec.is_empty and spec.job is None:
            spec = self.local.merge_from(spec)  # the session's task fills what the request leaves
        if spec.is_empty:
            candidates, kind, text = self._default(members, supported)
        else:
            candidates, kind, text = self._requested(spec, anchor, members, supported)
        return PlacementGroup(new, candidates, kind, text, anchor, spec)

    def _member_decisions(
        self, group: PlacementGroup, overrides: dict[int, Operation]
    ) -> list[tuple[Operation, Device, Reason]]:
        device, decider, decided = group.device, group.decider, group.reason
        assert device is not None and decider is not None and decided is not None
        by_rule = decided.kind in (ReasonKind.PINNED, ReasonKind.DEFAULT, ReasonKind.SOFT)
        first = group.anchor if by_rule else decider
        first_reason = decided
        if by_rule:
            first_reason = Reason(group.kind, group.text, device.name, first.device)
        result = []
        for op in group.new:
            if op.id in overrides:
                reason = _reference_reason(op, overrides[op.id], device)
            elif op is first:
                reason = first_reason
            elif by_rule and group.kind == ReasonKind.PINNED and _asked_itself(op):
                own = self._pinned_text(op, group.spec, device)
                reason = Reason(ReasonKind.PINNED, own, device.name, op.device)
            else:
                text = f"colocated with '{first.name}' ({first.type}), which is {first_reason.text}"
                reason = Reason(ReasonKind.COLOCATED, text, device.name, op.device, first.name)
            result.append((op, device, reason))
        return result

    def _supported_types(self, members: Sequence[Operation]) -> set[str]:
        types = {d.device_type for d in self.devices}
        return {t for t in types if all(op.op_def.supports(t, op.dtype) for op in members)}

    def _default(
        self, members: Sequence[Operation], supported: set[str]
    ) -> tuple[list[Device], str, str]:
        candidates = [d for d in self._local_devices if d.device_type in supported]
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
                candidates,
                ReasonKind.DEFAULT,
                f"no device requested, so {short}, the first GPU, which has {what}",
            )
        if not has_gpu:
            text = f"no device requested and this session has no GPU, so {short}"
            return candidates, ReasonKind.DEFAULT, text
        limiting = _first_unsupported(members, "GPU")
        return (
            candidates,
            ReasonKind.DEFAULT,
            f"no device requested and there is no GPU kernel for {_kernel_name(limiting)}, "
            f"so {short}",
        )

    def _requested(
        self, spec: DeviceSpec, anchor: Operation, members: Sequence[Operation], supported: set[str]
    ) -> tuple[list[Device], str, str]:
        matching = [d for d in self.devices if spec.matches(d.spec)]
        usable = [d for d in matching if d.device_type in supported]
        if usable:
            return usable, ReasonKind.PINNED, self._pinned_text(anchor, spec, usable[0])
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
                    return (
                        candidates,
                        ReasonKind.SOFT,
                        f"soft placement: {why}, so {short}, {first}",
                    )
                limiting = _first_unsupported(members, spec.device_type or "")
                why = f"there is no {spec.device_type} kernel for {_kernel_name(limiting)}"
                return candidates, ReasonKind.SOFT, f"soft placement: {why}, so {short}"
        raise self._unsatisfiable(spec, anchor, members, matching)

    def _unsatisfiable(
        self,
        spec: DeviceSpec,
        anchor: Operation,
        members: Sequence[Operation],
        matching: Sequence[Device],
    ) -> InvalidArgumentError | UnavailableError:
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
        missing = None if matching else self._missing_task(spec)
        if missing is not None:
            return UnavailableError(
                f"{head} task {missing} (at {self.missing_tasks[str(missing)]} in the cluster "
                "spec) is unavailable: no server of the session's cluster runs it. Runs that do "
                "not need it still work; start it with "
                f"pv.train.Server(cluster_spec, '{missing.job}', {missing.task}).",
                op=anchor,
            )
        local = self.local or (self.devices[0].spec if self.devices else DeviceSpec())
        remote = ""
        if (spec.job is not None and spec.job != local.job) or (
            spec.task is not None and spec.task != local.task
        ):
            remote = (
                f" This process is /job:{local.job}/replica:{local.replica}/task:{local.task}; "
                "ops of other jobs and tasks run in a session on their cluster: "
                "pv.Session(server.target)."
            )
        return InvalidArgumentError(
            f"{head} no devices matching that specification are registered in this process; "
            f"available devices: {self._names()}.{remote}{group} {_SOFT_HINT}",
            op=anchor,
        )

    def _missing_task(self, spec: DeviceSpec) -> DeviceSpec | None:
        """The first task that ``spec`` asks for among those of the cluster that do not run."""
        wanted = spec.replace(device_type=None, device_index=None)
        for name in self.missing_tasks:
            task = DeviceSpec.from_string(name)
            if wanted.matches(task):
                return task
        return None

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
    source, text, location, how = op._device_scopes[0]
    if source is RequestSource.DEVICE_SCOPE:
        phrase = f"`with device('{text}')` at {where(location)}"
    elif source is RequestSource.COLOCATE_WITH:
        phrase = f"`with colocate_with('{text}')` at {where(location)}"
    elif source is RequestSource.SET_DEVICE:
        phrase = f"op._set_device at {where(location)}"
    else:
        phrase = (
            f"device function {text} (scope at {where(location)}), which returned '{op.device}'"
        )
        chosen = how() if how is not None else None
        if chosen:
            phrase += f" ({chosen})"
    if len(op._device_scopes) > 1:
        phrase += f", merged with outer scopes into '{op.device}'"
    return phrase


# -- TensorFlow's heuristics (core/common_runtime/placer.cc) ------------------------------------
_METADATA_TYPES = frozenset({"Shape", "Size", "Rank"})  # TF's NC_METADATA node class


def is_generator(op: Operation) -> bool:
    """TF's ``IsGeneratorNode``: no data inputs, one output, and not a reference (a variable)."""
    return not op.inputs and len(op.outputs) == 1 and not op.op_def.ref_output


def consumers_by_producer(ops: Sequence[Operation]) -> dict[int, list[Operation]]:
    """Op id -> the op at the far end of each of its out edges, data and control (TF's edges)."""
    result: dict[int, list[Operation]] = {}
    for op in ops:
        for source in [t.op for t in op.inputs] + list(op.control_inputs):
            result.setdefault(source.id, []).append(op)
    return result


DeviceOf = Callable[[Operation], Device | None]


def _decide(group: PlacementGroup, op: Operation, choice: tuple[Device, Reason] | None) -> None:
    """The group goes where ``op``'s heuristic says, or else to its first candidate."""
    if choice is None:
        device = group.candidates[0]
        choice = device, Reason(group.kind, group.text, device.name, op.device)
    group.device, group.reason = choice
    group.decider = op


def _follow_input(
    op: Operation, group: PlacementGroup, consumers: dict[int, list[Operation]], device_of: DeviceOf
) -> tuple[Device, Reason] | None:
    """TF's heuristic B: metadata ops, and lone unpinned Identities, go with their input."""
    if op.type in _METADATA_TYPES and op.inputs:
        kind = ReasonKind.METADATA
        why = f"as TensorFlow places {op.type}, which reads only its input's shape, with its input"
    elif _lone_identity(op, consumers):
        kind = ReasonKind.IDENTITY
        why = (
            "as TensorFlow places an unpinned Identity whose input and only consumer request "
            "the same device"
        )
    else:
        return None
    source = op.inputs[0].op
    device = device_of(source)
    if device is None or device not in group.candidates:
        return None
    text = f"placed with its input '{source.name}' on {short_name(device.name)}, {why}"
    return device, Reason(kind, text, device.name, op.device, source.name)


def _lone_identity(op: Operation, consumers: dict[int, list[Operation]]) -> bool:
    """TF's ``MatchIdentityOperation``: one edge in, one edge out, ends requesting alike."""
    if op.type != "Identity" or not op.requested_device.is_empty:
        return False
    if len(op.inputs) + len(op.control_inputs) != 1 or not op.inputs:
        return False
    outs = consumers.get(op.id, [])
    if len(outs) > 1:
        return False
    # With no consumer, TF's only out edge goes to the graph's sink, which requests nothing.
    consumer_request = outs[0].requested_device if outs else DeviceSpec()
    return op.inputs[0].op.requested_device == consumer_request


def _follow_consumers(
    op: Operation, group: PlacementGroup, consumers: dict[int, list[Operation]], device_of: DeviceOf
) -> tuple[Device, Reason] | None:
    """TF's heuristic A: a generator goes where all its consumers went, if it may go there."""
    outs = consumers.get(op.id, [])
    devices = {device_of(consumer) for consumer in outs}
    if len(devices) != 1:
        return None
    (device,) = devices
    if device is None or device not in group.candidates:
        return None
    if len(outs) == 1:
        whom = f"its only consumer '{outs[0].name}'"
    else:
        whom = f"all {len(outs)} of its consumers ({', '.join(repr(c.name) for c in outs)})"
    text = (
        f"placed with {whom} on {short_name(device.name)}, as TensorFlow places ops that only "
        "generate a value (no inputs, one output) with the ops that use it"
    )
    return device, Reason(ReasonKind.GENERATOR, text, device.name, op.device, outs[0].name)


def _reference_reason(op: Operation, variable: Operation, device: Device) -> Reason:
    if variable.op_def.ref_output:
        text = (
            f"placed with '{variable.name}' ({variable.type}) on {short_name(device.name)}: it "
            f"takes '{variable.name}' by reference, so TensorFlow ignores its own request "
            f"'{op.device}', which contradicts the variable's '{variable.device}'"
        )
    else:
        text = (
            f"placed with '{variable.name}' ({variable.type}) on {short_name(device.name)}: it "
            f"reads the resource '{variable.name}' made, so TensorFlow ignores its own request "
            f"'{op.device}', which contradicts where the ops colocated with that resource go"
        )
    return Reason(ReasonKind.REFERENCE, text, device.name, op.device, variable.name)


def _sticky(
    earlier: Operation, new: Sequence[Operation], placement: Placement
) -> list[tuple[Operation, Device, Reason]]:
    device = placement.device(earlier.name)
    text = (
        f"kept on {short_name(device.name)} with '{earlier.name}': an earlier run of this "
        "session placed its colocation group there (placements stick within a session)"
    )
    reason = Reason(ReasonKind.STICKY, text, device.name, "", earlier.name)
    return [(op, device, replace(reason, requested=op.device)) for op in new]


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
