"""Why an op went where it did: every placement decision carries one of these."""

from __future__ import annotations

import os
from dataclasses import dataclass

from placeviz.graph.source import is_cell

# The kinds of decision, in the words ``explain`` uses.
PINNED = "pinned"  # the user asked for this device (a device scope, function or _set_device)
DEFAULT = "default"  # nothing was asked: GPU:0 when a GPU kernel exists, else CPU:0
SOFT = "soft"  # the request could not be met and soft placement chose a supported device
COLOCATED = "colocated"  # placed with its colocation group (a variable's ops, colocate_with)
STICKY = "sticky"  # kept where an earlier run of the same session put its group
# TensorFlow's placer heuristics (core/common_runtime/placer.cc), each used only among the devices
# the op's group may take:
GENERATOR = "generator"  # no inputs, one output: goes where all its consumers went
METADATA = "metadata"  # Shape, Size, Rank read only their input's shape: placed with that input
IDENTITY = "identity"  # an unpinned Identity between two ops requesting the same device
REFERENCE = "reference"  # takes a variable by reference: its own conflicting request is ignored
# Not a decision: the op's group could not be placed, and the document's reason text is the error
# a run that needs the op raises (it names the op, its source line and the devices).
UNPLACED = "unplaced"
KINDS = (
    PINNED,
    DEFAULT,
    SOFT,
    COLOCATED,
    STICKY,
    GENERATOR,
    METADATA,
    IDENTITY,
    REFERENCE,
    UNPLACED,
)


@dataclass(frozen=True)
class Reason:
    """A decision a student can read: ``kind``, one sentence of ``text``, and the facts."""

    kind: str
    text: str
    device: str  # the assigned device, full name
    requested: str = ""  # the op's own requested spec ('' when it asked for nothing)
    anchor: str | None = None  # the op whose request decided a colocated op's device

    def __str__(self) -> str:
        return self.text


def where(location: tuple[str, int]) -> str:
    """'line 3' in a notebook cell, 'line 3 of train.py' in a file."""
    filename, line = location
    if filename.startswith("<") or "ipykernel" in filename or is_cell(filename):
        return f"line {line}"
    return f"line {line} of {os.path.basename(filename)}"


def short_name(device_name: str) -> str:
    """'/job:localhost/replica:0/task:0/device:GPU:0' -> 'GPU:0'."""
    return device_name.rsplit("device:", 1)[-1]
