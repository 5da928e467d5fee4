"""The text summary of a trace (where the ops ran), as the magic prints it and saves it as
``text/plain``."""

from __future__ import annotations

import unicodedata

from placeviz.events.trace import Trace


def summary_text(trace: Trace) -> str:
    """Where the ops ran: one line per device that ran any, with its op count and busy time."""
    lines = []
    for name, stats in trace.summary().items():
        if stats.ops:
            lines.append(f"{visible_text(name)}: {stats.ops} ops, busy {stats.busy_s * 1e3:.3f} ms")
    return "\n".join(lines) or "no ops ran"


def visible_text(name: str) -> str:
    """``name`` with its control and format characters (Unicode Cc, Cf: bidirectional overrides
    and isolates, zero-width marks, newlines) as escapes, so that ``safe\\u202egnp.exe`` cannot
    show as ``safeexe.png``, nor a name break a line; the front end's ``visibleText`` is the
    same rule."""
    return "".join(_escape(ch) if unicodedata.category(ch) in ("Cc", "Cf") else ch for ch in name)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
