"""The placement log: a ``Device mapping:`` block, then each op once, at its first placement.

TensorFlow prints every op again on every step, and its users complain; placeviz prints an op only
when it is first placed, with the device it was assigned.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from placeviz.contract import ReasonKind
from placeviz.devices.context import Device
from placeviz.graph.core import Operation
from placeviz.placement.placer import is_generator
from placeviz.placement.reason import Reason


def device_mapping(devices: Sequence[Device]) -> str:
    lines = ["Device mapping:"]
    for device in devices:
        if device.device_type != "CPU":
            lines.append(f"{device.name} -> {physical_description(device)}")
    if len(lines) == 1:
        lines.append("no known devices.")
    return "\n".join(lines)


def physical_description(device: Device) -> str:
    """TensorFlow's description of the card behind a device (simulated ones say so)."""
    physical = device.physical
    text = (
        f"device: {physical.index}, name: {physical.description}, pci bus id: {physical.pci_bus_id}"
    )
    if physical.compute_capability:
        text += f", compute capability: {physical.compute_capability}"
    if device.logical:
        text += f", logical device with {device.memory_limit >> 20} MiB"
    return text


def ignored_requests(decisions: Iterable[tuple[Operation, Device, Reason]]) -> list[str]:
    """TensorFlow's note for each op whose request a reference edge overrode."""
    lines = []
    for op, _, reason in decisions:
        if reason.kind == ReasonKind.REFERENCE and reason.anchor is not None:
            variable = op.graph.get_operation_by_name(reason.anchor)
            lines.append(
                f"Ignoring device specification {op.requested_device} for node '{op.name}' "
                f"because the input edge from '{variable.name}' is a reference connection and "
                f"already has a device field set to {variable.requested_device}"
            )
    return lines


def placement_lines(decisions: Iterable[tuple[Operation, Device]]) -> list[str]:
    """In TensorFlow's order: as its placer decides, generators after every other op."""
    ordered = sorted(decisions, key=lambda decision: is_generator(decision[0]))
    return [f"{op.name}: ({op.type}): {device.name}" for op, device in ordered]


def write(text: str) -> None:
    """Log to stderr, as TensorFlow does (looked up per call so redirection works)."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
