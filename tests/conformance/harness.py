"""What a conformance program is, and the facts one run of it shows, under either module.

Neither TensorFlow nor placeviz is imported here: the recorder hands in ``tf.compat.v1`` and the
test hands in ``placeviz``, each with its own way to read where the session put each op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FACT_KINDS = ("graph", "assigned", "values", "error")


@dataclass(frozen=True)
class Run:
    """One ``sess.run(fetches, feed_dict=feed)``."""

    fetches: Any
    feed: dict[Any, Any] | None = None


class Note(dict):
    """Plain Python facts a program observed while building (names, parsed device specs...),
    compared like fetched values."""


class Runs(tuple):
    """Several runs of one session, in order (a program returns this for more than one); a
    ``Note`` among them is recorded as it is, without a run."""

    def __new__(cls, *runs: Any) -> Runs:
        return super().__new__(cls, runs)


@dataclass(frozen=True)
class Program:
    """A TF1 program and how to run it: ``build(tf)`` builds a graph and returns what to run."""

    name: str
    build: Callable[[Any], Any]
    cpus: int = 1
    soft: bool = False
    error: tuple[str, ...] = ()
    facts: tuple[str, ...] = FACT_KINDS
    line: int = 0


PROGRAMS: dict[str, Program] = {}


def program(
    build: Callable[[Any], Any] | None = None,
    *,
    name: str | None = None,
    cpus: int = 1,
    soft: bool = False,
    error: Iterable[str] = (),
    skip: Iterable[str] = (),
) -> Any:
    """Declare a program once: ``error`` lists key words TensorFlow's message must hold, ``skip``
    the fact kinds not to compare (``values`` of random ops)."""

    def declare(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        key = name or fn.__name__
        if key in PROGRAMS:
            raise ValueError(f"conformance program {key!r} declared twice")
        PROGRAMS[key] = Program(
            key,
            fn,
            cpus,
            soft,
            tuple(error),
            tuple(k for k in FACT_KINDS if k not in set(skip)),
            fn.__code__.co_firstlineno,
        )
        return fn

    return declare(build) if build is not None else declare


@dataclass
class Backend:
    """A module that speaks TF1, and how to learn the assigned device of every op it placed."""

    tf: Any
    placement: Callable[[Any], dict[str, str]]
    config: dict[str, Any] = field(default_factory=dict)


def collect(program: Program, backend: Backend) -> dict[str, Any]:
    """Build and run ``program`` in a fresh graph and return its facts (an error is a fact)."""
    tf = backend.tf
    facts: dict[str, Any] = {"values": [], "error": None}
    graph = tf.Graph()
    sess = None
    stage = "build"
    with graph.as_default():
        try:
            result = program.build(tf)
            steps = _steps(result)
            runs = [s for s in steps if isinstance(s, Run)]
            for note in (s for s in steps if isinstance(s, Note)):
                facts["values"].append({"note": describe(dict(note))})
            if runs:
                config = tf.ConfigProto(
                    device_count={"CPU": program.cpus},
                    allow_soft_placement=program.soft,
                    **backend.config,
                )
                sess = tf.Session(config=config)
                for index, run in enumerate(runs):
                    stage = f"run {index}"
                    value = sess.run(run.fetches, feed_dict=run.feed)
                    facts["values"].append(describe(value))
        except Exception as exc:
            facts["error"] = {
                "class": type(exc).__name__,
                # What ``except`` clauses catch it: placeviz's InvalidArgumentError is also a
                # ValueError, so code written for TensorFlow's ValueError still catches it.
                "classes": [c.__name__ for c in type(exc).__mro__[:-2]],
                "stage": stage,
                "message": str(exc),
            }
        assigned = backend.placement(sess) if sess is not None else {}
        facts["ops"] = {
            op.name: {**describe_op(op), "assigned": assigned.get(op.name)}
            for op in graph.get_operations()
        }
        if sess is not None:
            sess.close()
    return facts


def describe_op(op: Any) -> dict[str, Any]:
    """What a TF user sees of an op in the graph (its assigned device comes from the session)."""
    return {
        "type": op.type,
        "device": op.device,
        "inputs": [t.name for t in op.inputs],
        "control_inputs": [c.name for c in op.control_inputs],
        "outputs": [f"{t.dtype.name} {_shape(t)}" for t in op.outputs],
        "colocation": sorted(
            g.decode() if isinstance(g, bytes) else g for g in op.colocation_groups()
        ),
    }


def _shape(tensor: Any) -> Any:
    try:
        return tensor.shape.as_list()
    except ValueError:  # unknown rank
        return None


def _steps(result: Any) -> list[Run | Note]:
    items = [] if result is None else list(result) if isinstance(result, Runs) else [result]
    return [item if isinstance(item, (Run, Note)) else Run(item) for item in items]


def describe(value: Any) -> Any:
    """A fetched value as JSON: arrays keep dtype and shape; structures keep their shape."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {str(k): describe(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if isinstance(value, (str, bool, int, float)) and not isinstance(value, np.generic):
        return value
    array = np.asarray(value)
    if array.dtype.kind in "SOU":
        strings = array.astype(str)
        return {"dtype": "string", "shape": list(array.shape), "value": strings.tolist()}
    return {"dtype": str(array.dtype), "shape": list(array.shape), "value": array.tolist()}
