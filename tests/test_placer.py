"""The simple placer: TensorFlow's rules, colocation, soft placement and the reasons it gives."""

from __future__ import annotations

import pytest

import placeviz as pv
from placeviz.devices.context import context
from placeviz.placement.placer import SimplePlacer

LOCAL = "/job:localhost/replica:0/task:0/device:"


@pytest.fixture(autouse=True)
def two_gpus() -> None:
    pv.config.simulate_gpus(2)


def test_default_is_gpu0_when_a_gpu_kernel_exists() -> None:
    c = pv.matmul(pv.ones([2, 2]), pv.ones([2, 2]))
    sess = pv.Session()
    sess.run(c)
    assert sess.placement["MatMul"] == f"{LOCAL}GPU:0"
    reason = sess.placement.explain("MatMul")
    assert reason.kind == "default"
    assert (
        reason.text
        == "no device requested, so GPU:0, the first GPU, which has a kernel for MatMul(float32)"
    )
    assert reason.device == f"{LOCAL}GPU:0"


def test_default_is_cpu_without_gpus_or_without_a_gpu_kernel() -> None:
    pv.config.reset_devices()
    sess = pv.Session()
    sess.run(pv.constant(1.0) + 1.0)
    assert sess.placement["add"] == f"{LOCAL}CPU:0"
    assert sess.placement.explain("add").text == (
        "no device requested and this session has no GPU, so CPU:0"
    )
    pv.config.reset_devices()
    pv.config.simulate_gpus(1)
    i = pv.Variable(3)
    sess = pv.Session()
    sess.run(i.initializer)
    assert sess.placement["Variable"] == f"{LOCAL}CPU:0"
    assert "no GPU kernel for VariableV2(int32)" in sess.placement.explain("Variable").text
    assert sess.placement.explain("Variable/read").kind == "colocated"


def test_a_comparison_is_placed_by_the_dtype_it_compares() -> None:
    """TF selects a comparison's kernel by its input type T, not its bool output: strings have
    no GPU kernel, so comparing strings stays on the CPU although bool tensors may be on a GPU."""
    words = pv.not_equal(pv.constant(["a", "b"]), "a", name="words")
    numbers = pv.not_equal(pv.constant([1.0, 2.0]), 1.0, name="numbers")
    sess = pv.Session()
    assert sess.run(words).tolist() == [False, True]
    sess.run(numbers)
    assert sess.placement["words"] == f"{LOCAL}CPU:0"
    assert "no GPU kernel for NotEqual(string)" in sess.placement.explain("words").text
    assert sess.placement["numbers"] == f"{LOCAL}GPU:0"


def test_pinned_partial_spec_completes_unset_fields() -> None:
    with pv.device("/device:GPU:*"):
        c = pv.constant(1.0)
    with pv.device("/job:localhost"):
        d = pv.constant(2.0)
    sess = pv.Session()
    sess.run([c, d])
    assert sess.placement[c.op.name] == f"{LOCAL}GPU:0"
    assert sess.placement[d.op.name] == f"{LOCAL}GPU:0"
    assert "first device matching '/device:GPU:*'" in sess.placement.explain(c.op.name).text
    assert sess.placement.explain(d.op.name).kind == "pinned"


def test_placements_stick_within_a_session() -> None:
    a = pv.constant(1.0)
    sess = pv.Session()
    sess.run(a)
    a.op._set_device("/cpu:0")
    sess.run(a)
    assert sess.placement[a.op.name] == f"{LOCAL}GPU:0"
    # A new session places afresh.
    fresh = pv.Session()
    fresh.run(a)
    assert fresh.placement[a.op.name] == f"{LOCAL}CPU:0"
    assert "op._set_device" in fresh.placement.explain(a.op.name).text


def test_new_op_joining_a_placed_group_is_sticky() -> None:
    v = pv.Variable(1.0, name="v")
    sess = pv.Session()
    sess.run(v.initializer)
    with pv.device("/cpu:0"):
        inc = v.assign_add(1.0)
    sess.run(inc)
    assert sess.placement[inc.op.name] == sess.placement["v"] == f"{LOCAL}GPU:0"
    reason = sess.placement.explain(inc.op.name)
    assert reason.kind == "sticky"
    assert "earlier run of this session" in reason.text
    assert sess.run(v) == 2.0


def test_whole_graph_is_placed_at_the_first_run() -> None:
    a = pv.constant(1.0, name="a")
    unrelated = pv.constant(2.0, name="unrelated")
    sess = pv.Session()
    sess.run(a)
    assert set(sess.placement) == {"a", "unrelated"}
    assert unrelated.op.name in sess.placement


def test_colocate_with_takes_the_targets_device() -> None:
    with pv.device("/cpu:0"):
        a = pv.constant(1.0, name="a")
    with pv.colocate_with(a), pv.device("/gpu:0"):
        b = pv.add(a, 1.0, name="b")
    assert b.op.device == "/device:CPU:0"  # as in TensorFlow, the colocation wins
    sess = pv.Session()
    assert sess.run(b) == 2.0
    assert sess.placement.explain("b").kind == "colocated"


def test_colocation_conflict_names_both_ops() -> None:
    with pv.device("/cpu:0"):
        a = pv.constant(1.0, name="a")
    with pv.colocate_with(a):
        b = pv.add(a, 1.0, name="b")
    b.op._set_device("/gpu:0")
    with pytest.raises(pv.errors.InvalidArgumentError) as info:
        pv.Session().run(b)
    message = str(info.value)
    assert message.startswith("Cannot colocate nodes 'a' (created at test_placer.py:")
    assert "and 'b'" in message
    assert "Cannot merge devices with incompatible types: '/device:CPU:0' and '/device:GPU:0'" in (
        message
    )
    # Under soft placement the conflicting type is dropped and the group lands together.
    sess = pv.Session(config=pv.ConfigProto(allow_soft_placement=True))
    assert sess.run(b) == 2.0
    assert sess.placement["a"] == sess.placement["b"]


def test_a_failed_group_only_fails_runs_that_need_it() -> None:
    with pv.device("/gpu:5"):
        bad = pv.constant(1.0, name="bad")
    good = pv.constant(2.0, name="good")
    sess = pv.Session()
    assert sess.run(good) == 2.0
    with pytest.raises(pv.errors.InvalidArgumentError, match="operation 'bad'"):
        sess.run(bad)
    assert sess.run(good * 2.0) == 4.0
    assert "bad" not in sess.placement


def test_soft_placement_keeps_job_and_task() -> None:
    with pv.device("/job:ps/task:0/device:GPU:0"):
        a = pv.constant(1.0)
    sess = pv.Session(config=pv.ConfigProto(allow_soft_placement=True))
    with pytest.raises(pv.errors.InvalidArgumentError, match="/job:ps"):
        sess.run(a)


def test_soft_placement_when_the_kernel_is_missing_names_the_kernel() -> None:
    with pv.device("/gpu:1"):
        i = pv.Variable(3, name="i")
    sess = pv.Session(config=pv.ConfigProto(allow_soft_placement=True))
    sess.run(i.initializer)
    reason = sess.placement.explain("i")
    assert reason.kind == "soft"
    assert reason.text == "soft placement: there is no GPU kernel for VariableV2(int32), so CPU:0"
    assert reason.requested == "/device:GPU:1"


def test_global_soft_placement_setting() -> None:
    pv.config.set_soft_device_placement(True)
    with pv.device("/gpu:9"):
        c = pv.constant(1.0)
    assert pv.Session().run(c) == 1.0


def test_devices_are_ordered_gpu_first_then_numeric_id() -> None:
    pv.config.reset_devices()
    pv.config.simulate_gpus(12)
    placer = SimplePlacer(context().devices(), soft=False)
    names = [d.name.rsplit("device:", 1)[1] for d in placer.devices]
    assert names[:3] == ["GPU:0", "GPU:1", "GPU:2"]
    assert names.index("GPU:2") < names.index("GPU:10")
    assert names[-1] == "CPU:0"


def test_placement_is_a_read_only_mapping() -> None:
    sess = pv.Session()
    sess.run(pv.constant(1.0, name="c"))
    assert dict(sess.placement) == {"c": f"{LOCAL}GPU:0"}
    with pytest.raises(TypeError):
        sess.placement["c"] = "/cpu:0"  # type: ignore[index]
    with pytest.raises(KeyError, match="has not been placed"):
        sess.placement.explain("nope")
