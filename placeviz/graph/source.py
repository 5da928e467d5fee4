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


# Code placeviz generates and compiles (run plans) is named so.
_GENERATED_PREFIX = "<placeviz "


def user_location() -> tuple[str, int]:
    """``(filename, line)`` of the innermost frame that is neither placeviz's nor contextlib's;
    for code of a notebook cell, the cell's label (``Cell In[3]``) in place of the filename."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not is_internal(filename):
            return _ipython_cell(filename) or filename, frame.f_lineno
        frame = frame.f_back  # type: ignore[assignment]
    return "<unknown>", 0


def is_internal(filename: str) -> bool:
    """Whether code of ``filename`` is placeviz's own (its examples are user code) or contextlib's
    between placeviz and the user."""
    if filename.startswith(_EXAMPLES_DIR):
        return False
    return (
        filename.startswith(_PACKAGE_DIR)
        or filename == _CONTEXTLIB
        or filename.startswith(_GENERATED_PREFIX)
    )


def format_location(location: tuple[str, int]) -> str:
    """``model.py:12``; for code of a notebook cell, what IPython's tracebacks say of it,
    ``Cell In[3], line 6``, and not the name of IPython's compile-cache file."""
    filename, line = location
    if is_cell(filename):
        return f"{filename}, line {line}"
    return f"{os.path.basename(filename)}:{line}"


_CELL = "Cell In["


def is_cell(filename: str) -> bool:
    """Whether a location's ``filename`` is a notebook cell's label."""
    return filename.startswith(_CELL)


def _ipython_cell(filename: str) -> str | None:
    """IPython's label of the cell compiled as ``filename`` (``Cell In[3]``), if it is one.

    Read when the op is made: ipykernel names a cell's file by the hash of its text, so a later
    cell with the same text (a cell run again) takes the file over, and its number with it.
    """
    ipython = sys.modules.get("IPython")  # never imported here: only a shell compiles cells
    shell = ipython.get_ipython() if ipython is not None else None
    label = shell.compile.format_code_name(filename) if shell is not None else None
    return None if label is None else " ".join(label)
