"""A run's programs per task (placeviz/cluster/program.py), without processes: control tokens a
stage would wait for although another of its dependencies already implies them are not sent, and
the order a stage's messages leave in."""

from __future__ import annotations

import placeviz as pv
from placeviz.cluster.partition import Partition
from placeviz.cluster.program import _implied_waits, _largest_first, destinations


def chain(*waits: set[int]) -> list[Partition]:
    """Partition i of task 't{i}' at stage i, waiting (by control edge) for ``waits[i]``."""
    return [Partition(f"t{i}", i, waits_for=set(w)) for i, w in enumerate(waits)]


def test_a_wait_implied_by_another_wait_is_dropped() -> None:
    # c waits for a and for b, and b itself waited for a: c's wait for a is implied
    parts = chain(set(), {0}, {0, 1})
    assert _implied_waits(parts, {}) == [set(), set(), {0}]


def test_independent_waits_are_kept() -> None:
    parts = chain(set(), set(), {0, 1})
    assert _implied_waits(parts, {}) == [set(), set(), set()]


def test_a_task_running_its_stages_in_order_implies_what_its_earlier_stage_waited_for() -> None:
    # task x's second stage waits for y, which waited for x's first stage: implied by order
    first = Partition("x", 0)
    other = Partition("y", 1, waits_for={0})
    second = Partition("x", 2, waits_for={0, 1})
    assert _implied_waits([first, other, second], {}) == [set(), set(), {0}]


def test_a_stage_sends_first_to_the_task_it_sends_most_bytes_then_to_those_only_signalled() -> None:
    graph = pv.Graph()
    with graph.as_default():
        small = pv.placeholder(pv.float32, [4], name="small")
        big = pv.placeholder(pv.float32, [1000], name="big")
        unknown = pv.placeholder(pv.float32, None, name="unknown")
    tensors = {t.name: t for t in (small, big, unknown)}
    sends = {"a": [small.name], "u": [unknown.name], "b": [big.name, small.name]}
    stage = {"sends": _largest_first(sends, tensors), "signals": {"c": ["^t#0"], "b": ["^t#0"]}}
    # b gets 4,016 bytes, a 16; a tensor of unknown size counts as none; c gets only a token
    assert destinations(stage) == ["b", "a", "u", "c"]
