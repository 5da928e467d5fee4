"""Colocation groups: ops that must share a device, found by union-find, as TensorFlow's placer.

Two things colocate ops: a reference edge (a Variable with the Assign and read ops that use it)
and ``colocate_with``. A group's request is the field-by-field merge of its members' requests;
conflicting explicit pins are an error (or, under soft placement, the conflicting type and id are
dropped and the placer chooses). An op that takes a variable by reference and asks for a device
the variable's request contradicts has its own request ignored, soft placement or not, as
TensorFlow's ``ColocationGraph`` does.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence

from placeviz.devices.spec import DeviceSpec
from placeviz.errors import InvalidArgumentError
from placeviz.graph.core import Operation

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


def colocation_groups(ops: Sequence[Operation]) -> list[list[Operation]]:
    """Partition ``ops`` (a whole graph, in creation order) into colocation groups."""
    by_name = {op.name: op for op in ops}
    uf = _UnionFind()
    for op in ops:
        for tensor in op.inputs:
            if tensor.op.op_def.ref_output:
                uf.union(op._id, tensor.op._id)
        for group in op._colocation:
            target = by_name.get(group.removeprefix("loc:@"))
            if target is not None:
                uf.union(op._id, target._id)
    groups: dict[int, list[Operation]] = {}
    for op in ops:
        groups.setdefault(uf.find(op._id), []).append(op)
    return list(groups.values())


def reference_overrides(ops: Sequence[Operation]) -> dict[int, Operation]:
    """Op id -> the variable whose request replaces the op's own, incompatible one."""
    overrides: dict[int, Operation] = {}
    for op in ops:
        for tensor in op.inputs:
            source = tensor.op
            if source.op_def.ref_output and not compatible(
                source.requested_device, op.requested_device
            ):
                overrides.setdefault(op._id, source)
    return overrides


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
        if request.is_empty or op._id in ignored:
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
    return bool(op._device_scopes) and op._device_scopes[0][0].startswith("colocate_with")
