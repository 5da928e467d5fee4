"""Where the user created something: the first stack frame outside placeviz."""

from __future__ import annotations

import contextlib
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# Scopes are context managers, so contextlib's frames sit between placeviz and the user.
_CONTEXTLIB = contextlib.__file__
# placeviz's own example programs are user code for the purpose of naming source lines.
_EXAMPLES_DIR = os.path.join(_PACKAGE_DIR, "examples") + os.sep


def user_location() -> tuple[str, int]:
    """``(filename, line)`` of the innermost frame that is neither placeviz's nor contextlib's."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_EXAMPLES_DIR) or (
            not filename.startswith(_PACKAGE_DIR) and filename != _CONTEXTLIB
        ):
            return filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return "<unknown>", 0


def format_location(location: tuple[str, int]) -> str:
    filename, line = location
    return f"{os.path.basename(filename)}:{line}"
