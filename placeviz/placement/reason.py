"""Why an op went where it did: every placement decision carries one of these."""

from __future__ import annotations

import os
from dataclasses import dataclass

from placeviz.contract import ReasonKind
from placeviz.devices.spec import short_name
from placeviz.graph.source import is_cell

__all__ = ["Reason", "short_name", "where"]


@dataclass(frozen=True)
class Reason:
    """A decision a student can read: ``kind``, one sentence of ``text``, and the facts."""

    kind: ReasonKind
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
