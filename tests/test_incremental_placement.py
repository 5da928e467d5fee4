"""Placing costs what was added, not the whole graph: colocation groups are kept up to date as
ops are made, and each run decides only the new ops (and those whose group failed before)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import placeviz as pv
from placeviz.placement.colocation import ColocationIndex


def _spy_on_placer(sess: pv.Session) -> list[int]:
    """How many ops each placement was asked to decide (the real placer still decides)."""
    sizes: list[int] = []
    place = sess._placing._placer.place

    def counting(ops: Any, placement: Any, index: Any) -> Any:
        sizes.append(len(ops))
        return place(ops, placement, index)

    sess._placing._placer.place = counting  # type: ignore[method-assign]
    return sizes


def test_a_run_after_the_graph_grew_decides_only_the_new_ops() -> None:
    x = pv.constant(np.ones(3, np.float32))
    for _ in range(500):
        x = x * 1.0  # a Const and a Mul each time
    sess = pv.Session()
    sizes = _spy_on_placer(sess)
    sess.run(x)
    y = x + 2.0
    np.testing.assert_array_equal(sess.run(y), [3.0, 3.0, 3.0])
    assert sizes == [1001, 2]
    assert sess.placement.explain(y.op.name).kind == "default"


def test_eager_ops_are_placed_one_at_a_time() -> None:
    pv.enable_eager_execution()
    x = pv.constant(np.ones(2, np.float32))
    for _ in range(50):
        x = x + 1.0
    from placeviz.runtime.eager import eager_session

    sess = eager_session()
    sizes = _spy_on_placer(sess)
    for _ in range(20):
        x = x + 1.0
    assert sizes and max(sizes) == 1
    np.testing.assert_array_equal(x.numpy(), [71.0, 71.0])


@pytest.mark.usefixtures("gpus4")
def test_a_group_that_failed_is_decided_again_with_the_next_ops() -> None:
    with pv.device("/gpu:0"):
        v = pv.Variable(3)  # int32 variables have no GPU kernel
    ok = pv.constant(1.0)
    sess = pv.Session(config=pv.ConfigProto(allow_soft_placement=False))
    sizes = _spy_on_placer(sess)
    assert sess.run(ok) == 1.0
    failed = len(sess._placing.failures)  # the variable's group: no GPU kernel for int32
    assert failed >= 3
    with pytest.raises(pv.errors.InvalidArgumentError):
        sess.run(v.initializer)
    later = ok * 2.0
    assert sess.run(later) == 2.0
    assert sizes[1] == failed + 2  # the failed group again, with the Const and the Mul


def test_the_index_joins_groups_across_references_and_names_made_later() -> None:
    a = pv.constant(1.0, name="a")
    with pv.get_default_graph().colocate_with_name("target"):  # the target does not exist yet
        early = pv.constant(2.0, name="early")
    v = pv.Variable(0.0, name="v")
    index = ColocationIndex()
    index.add(pv.get_default_graph().get_operations())
    target = pv.constant(3.0, name="target")
    index.add([target.op])
    assert [op.name for op in index.group(target.op)] == ["early", "target"]
    assert [op.name for op in index.group(early.op)] == ["early", "target"]
    assert [op.name for op in index.group(a.op)] == ["a"]
    members = [op.name for op in index.group(v.op)]
    assert {"v", "v/Assign", "v/read"} <= set(members)
    assert members == sorted(
        members, key=lambda n: pv.get_default_graph().get_operation_by_name(n).id
    )
