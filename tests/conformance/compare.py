"""Readable differences between the facts TensorFlow recorded and the facts placeviz shows."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from conformance.harness import Program

OP_FIELDS = ("type", "device", "inputs", "control_inputs", "outputs", "colocation")
# A set in TensorFlow's graph (its C++ edges): the order TF lists them in is not an order it keeps.
UNORDERED_FIELDS = ("control_inputs",)
TOLERANCE = 1e-5


def differences(
    program: Program,
    tf: dict[str, Any],
    pv: dict[str, Any],
    set_aside: Callable[[str], bool] = lambda name: False,
) -> list[str]:
    """One line per fact that differs, TensorFlow's side first; the facts of ops ``set_aside``
    names (a known difference confined to them) are not compared."""
    found: list[str] = []
    if "error" in program.facts:
        found += _error(tf["error"], pv["error"])
    tf_ops = {n: op for n, op in tf["ops"].items() if not set_aside(n)}
    pv_ops = {n: op for n, op in pv["ops"].items() if not set_aside(n)}
    if "graph" in program.facts:
        missing = [n for n in tf_ops if n not in pv_ops]
        extra = [n for n in pv_ops if n not in tf_ops]
        if missing:
            found.append(f"ops only in TensorFlow: {missing}")
        if extra:
            found.append(f"ops only in placeviz: {extra}")
        for name, op in tf_ops.items():
            if name in pv_ops:
                found += [
                    f"{name}.{key}: TF {op[key]!r} != placeviz {pv_ops[name][key]!r}"
                    for key in OP_FIELDS
                    if _field(key, op[key]) != _field(key, pv_ops[name][key])
                ]
    if "assigned" in program.facts:
        for name, op in tf_ops.items():
            theirs = pv_ops.get(name, {}).get("assigned")
            if name in pv_ops and op["assigned"] != theirs:
                found.append(f"{name} assigned: TF {op['assigned']} != placeviz {theirs}")
    if len(tf["values"]) != len(pv["values"]):
        found.append(f"fetched {len(tf['values'])} results in TF, {len(pv['values'])} in placeviz")
    for index, (want, got) in enumerate(zip(tf["values"], pv["values"])):
        found += [
            f"result {index}{path}: {text}"
            for path, text in _value(want, got, "values" in program.facts, "")
        ]
    return found


def _field(key: str, value: Any) -> Any:
    return sorted(value) if key in UNORDERED_FIELDS else value


def _error(tf: dict[str, Any] | None, pv: dict[str, Any] | None) -> list[str]:
    if tf is None and pv is None:
        return []
    if tf is None:
        assert pv is not None
        return [
            f"TF raised nothing; placeviz raised {pv['class']} at {pv['stage']}: {pv['message']}"
        ]
    if pv is None:
        return [f"TF raised {tf['class']} at {tf['stage']} ({tf['message']}); placeviz nothing"]
    found = []
    if tf["class"] not in pv["classes"] or tf["stage"] != pv["stage"]:
        found.append(
            f"TF raised {tf['class']} at {tf['stage']}, placeviz {pv['class']} at {pv['stage']}"
            f": {pv['message'][:400]}"
        )
    missing = [w for w in tf["words"] if w not in pv["message"]]
    if missing:
        found.append(f"placeviz's message lacks {missing}: {pv['message'][:400]}")
    return found


def _value(want: Any, got: Any, exact: bool, path: str) -> list[tuple[str, str]]:
    """Arrays compare dtype and shape always, and their values unless the program skips them."""
    if _is_array(want) and _is_array(got):
        found = [
            (f"{path}.{key}", f"TF {want[key]!r} != placeviz {got[key]!r}")
            for key in ("dtype", "shape")
            if want[key] != got[key]
        ]
        if exact and not found and not _close(want["value"], got["value"]):
            found.append((path, f"TF {want['value']!r} != placeviz {got['value']!r}"))
        return found
    if isinstance(want, dict) and isinstance(got, dict) and want.keys() == got.keys():
        return [p for key in want for p in _value(want[key], got[key], exact, f"{path}[{key!r}]")]
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [
            p
            for i, (w, g) in enumerate(zip(want, got))
            for p in _value(w, g, exact, f"{path}[{i}]")
        ]
    if want != got:
        return [(path, f"TF {want!r} != placeviz {got!r}")]
    return []


def _is_array(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == {"dtype", "shape", "value"}


def _close(want: Any, got: Any) -> bool:
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(_close(w, g) for w, g in zip(want, got))
    if isinstance(want, float) and isinstance(got, (int, float)):
        if math.isnan(want):
            return math.isnan(got)
        return math.isclose(want, got, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    return want == got
