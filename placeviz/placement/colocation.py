"""Colocation groups: ops that must share a device, found by union-find, as TensorFlow's placer.

Two things colocate ops: a reference edge (a Variable with the Assign and read ops that use it)
and ``colocate_with``. A group's request is the field-by-field merge of its members' requests;
conflicting explicit pins are an error (or, under soft placement, the conflicting type and id are
dropped and the placer chooses). An op that takes a variable by reference and asks for a device
the variable's request contradicts has its own request ignored, soft placement or not, as
TensorFlow's ``ColocationGraph`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence

from placeviz import dtypes
from placeviz.devices.spec import DeviceSpec
from placeviz.errors import InvalidArgumentError
from placeviz.graph.core import Operation, RequestSource, Tensor

_FIELD_WORDS = {
    "job": "jobs",
    "replica": "replicas",
    "task": "tasks",
    "device_type": "types",
    "device_index": "ids",
}


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        parent = self.parent
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # the earlier-created op stays the root, so groups are reported in creation order
            if ra < rb:
                self.parent[rb] = ra
            else:
                self.parent[ra] = rb


class ColocationIndex:
    """The colocation groups of a growing graph, updated as ops are added (not rebuilt).

    A session places the ops made since its last run; finding their groups must not cost a walk
    over the whole graph, or eager mode (one placement per op) would grow quadratically.
    """

    def __init__(self) -> None:
        self._uf = _UnionFind()
        self._members: dict[int, list[Operation]] = {}  # root id -> members
        self._by_name: dict[str, Operation] = {}
        self._waiting: dict[str, list[Operation]] = {}  # colocated with an op not made yet

    def add(self, ops: Iterable[Operation]) -> None:
        for op in ops:
            self._members[op.id] = [op]
            self._by_name[op.name] = op
            for tensor in op.inputs:
                if _reads_state(op, tensor):
                    if self._by_name.get(tensor.op.name) is tensor.op:
                        self._union(op, tensor.op)
                    else:  # a cond's RefSwitch, made after the op that reads through it
                        self._waiting.setdefault(tensor.op.name, []).append(op)
            for group in op._colocation:
                name = group.removeprefix("loc:@")
                target = self._by_name.get(name)
                if target is not None:
                    self._union(op, target)
                else:
                    self._waiting.setdefault(name, []).append(op)
            for early in self._waiting.pop(op.name, ()):
                self._union(op, early)

    def group(self, op: Operation) -> list[Operation]:
        """The op's group, in creation order."""
        return sorted(self._members[self._uf.find(op.id)], key=_creation)

    def _union(self, a: Operation, b: Operation) -> None:
        ra, rb = self._uf.find(a.id), self._uf.find(b.id)
        if ra == rb:
            return
        self._uf.union(ra, rb)
        root = self._uf.find(ra)
        merged = self._members.pop(rb if root == ra else ra)
        self._members[root].extend(merged)


def _reads_state(op: Operation, tensor: Tensor) -> bool:
    """The op works on what ``tensor`` refers to: a variable's reference (unless the op takes
    its value only), or a resource handle (a TensorArray's: TF keeps its users with it)."""
    if tensor.dtype.base_dtype is dtypes.resource:
        return True
    return tensor.op.op_def.ref_output and not op.op_def.value_inputs


def _creation(op: Operation) -> int:
    return op.id


def reference_overrides(
    ops: Sequence[Operation], group: Callable[[Operation], list[Operation]] | None = None
) -> dict[int, Operation]:
    """Op id -> the variable (or the resource's maker) whose request replaces the op's own,
    incompatible one. As TF's ``EnsureCompatibilityAcrossResourceEdge``, an op reading a
    resource handle (a TensorArray's) gives up a request that contradicts what the rest of its
    group (``group(op)``: the handle's maker and the ops colocated with it) asks for."""
    overrides: dict[int, Operation] = {}
    for op in ops:
        for tensor in op.inputs:
            source = tensor.op
            if (
                source.op_def.ref_output
                and not op.op_def.value_inputs
                and not compatible(source.requested_device, op.requested_device)
            ):
                overrides.setdefault(op.id, source)
        if group is None or op.id in overrides or op.requested_device.is_empty:
            continue
        handles = [t for t in op.inputs if t.dtype.base_dtype is dtypes.resource]
        if not handles:
            continue
        rest = [m for m in group(op) if m is not op and not _reads_resource(m)]
        try:
            asked, _ = merged_request(rest, soft=False)
        except InvalidArgumentError:
            continue  # the rest conflicts by itself: the placer reports that
        if not compatible(asked, op.requested_device):
            overrides[op.id] = _resource_maker(handles[0])
    return overrides


def _reads_resource(op: Operation) -> bool:
    return any(t.dtype.base_dtype is dtypes.resource for t in op.inputs)


def _resource_maker(handle: Tensor) -> Operation:
    """The op that made the resource a handle names (through a loop's Enter, say)."""
    while handle.op.inputs and handle.op.inputs[0].dtype.base_dtype is dtypes.resource:
        handle = handle.op.inputs[0]
    return handle.op


def compatible(a: DeviceSpec, b: DeviceSpec) -> bool:
    """No field is set in both to different values (TF's ``AreCompatibleDevNames``)."""
    return all(
        getattr(a, name) is None or getattr(b, name) is None or getattr(a, name) == getattr(b, name)
        for name in _FIELD_WORDS
    )


def merged_request(
    members: Iterable[Operation], soft: bool, ignored: Container[int] = ()
) -> tuple[DeviceSpec, Operation | None]:
    """The group's combined request, and the first member that asked for anything.

    Members in ``ignored`` (reference consumers overridden by their variable) ask for nothing.
    """
    merged = DeviceSpec()
    anchor: Operation | None = None
    owner: dict[str, Operation] = {}
    for op in members:
        request = op.requested_device
        if request.is_empty or op.id in ignored:
            continue
        if anchor is None and not inherited_request(op):
            anchor = op
        for name in _FIELD_WORDS:
            mine, theirs = getattr(request, name), getattr(merged, name)
            if mine is None:
                continue
            if name == "device_index" and merged.device_type is None:
                continue  # the type was dropped by a soft conflict, so an id means nothing
            if theirs is not None and mine != theirs:
                if soft and name in ("device_type", "device_index"):
                    dropped = ("device_type", "device_index") if name == "device_type" else (name,)
                    merged = merged.replace(**dict.fromkeys(dropped))
                    continue
                other = owner[name]
                raise InvalidArgumentError(
                    f"Cannot colocate nodes '{other.name}' (created at {other.source}) and "
                    f"'{op.name}' (created at {op.source}): Cannot merge devices with "
                    f"incompatible {_FIELD_WORDS[name]}: '{other.requested_device}' and "
                    f"'{request}'",
                    op=op,
                )
            if theirs is None:
                merged = merged.replace(**{name: mine})
                owner[name] = op
    return merged, anchor


def inherited_request(op: Operation) -> bool:
    """True when the op's request was copied from a ``colocate_with`` target."""
    return bool(op._device_scopes) and op._device_scopes[0].source is RequestSource.COLOCATE_WITH
