"""Eager execution: ops run when created, print their values, and log where they ran."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import placeviz as pv
from placeviz.runtime.eager import eager_session

GPU0 = "/job:localhost/replica:0/task:0/device:GPU:0"


@pytest.fixture
def eager(gpus4: None) -> None:
    pv.enable_eager_execution()


def test_ops_run_at_creation_and_print_like_tensorflow_2(eager: None) -> None:
    a = pv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = pv.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    c = pv.matmul(a, b)
    np.testing.assert_array_equal(c.numpy(), [[22, 28], [49, 64]])
    assert str(c) == "pv.Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)"
    assert str(pv.reduce_sum(c)) == "pv.Tensor(163.0, shape=(), dtype=float32)"
    assert pv.executing_eagerly()


def test_the_log_names_each_execution_and_skips_host_constants(
    eager: None, capsys: pytest.CaptureFixture[str]
) -> None:
    pv.debugging.set_log_device_placement(True)
    with pv.device("/CPU:0"):
        a = pv.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = pv.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    pv.matmul(a, b)
    pv.matmul(a, b)
    assert capsys.readouterr().err.splitlines() == [
        f"Executing op _EagerConst in device {GPU0}",
        f"Executing op MatMul in device {GPU0}",
        f"Executing op MatMul in device {GPU0}",
    ]


def test_variables_are_initialized_at_creation_and_read_afresh(eager: None) -> None:
    v = pv.Variable(1.0, name="v")
    v.assign_add(2.0)
    assert (v * 2).numpy() == 6.0
    assert repr(v) == "<pv.Variable 'v:0' shape=() dtype=float32, numpy=3.0>"
    v.assign(10.0)
    assert v.numpy() == 10.0


def test_ops_after_a_placeholder_stay_symbolic_and_run_in_a_session(eager: None) -> None:
    x = pv.placeholder(pv.float32, shape=[None])
    w = pv.constant(3.0)
    y = x * w
    with pytest.raises(ValueError, match="symbolic"):
        y.numpy()
    assert str(y) == repr(y)
    np.testing.assert_array_equal(eager_session().run(y, {x: [1.0, 2.0]}), [3.0, 6.0])


def test_control_dependencies_are_met_by_program_order(eager: None) -> None:
    v = pv.Variable(1.0)
    update = v.assign_add(4.0)
    with pv.control_dependencies([update]):
        read = v.read_value()
    assert read.op.control_inputs == [update.op]  # kept in the graph, met by program order
    assert read.numpy() == 5.0
    assert v.numpy() == 5.0  # the update did not run a second time for the control edge


def test_a_user_graph_is_built_not_executed(eager: None) -> None:
    with pv.Graph().as_default():
        assert not pv.executing_eagerly()
        c = pv.constant(1.0) + 1.0
        with pytest.raises(ValueError):
            c.numpy()
        assert pv.Session().run(c) == 2.0
    assert pv.executing_eagerly()


def test_an_unknown_device_fails_at_creation_and_leaves_eager_mode_usable(eager: None) -> None:
    with pv.device("/device:GPU:7"), pytest.raises(pv.errors.InvalidArgumentError) as info:
        pv.constant(1.0, name="far")
    assert "GPU:7" in str(info.value) and "test_eager.py" in str(info.value)
    assert (pv.constant(2.0) * 3.0).numpy() == 6.0


def test_graph_mode_is_the_default() -> None:
    # In a fresh interpreter: the test fixtures switch eager mode off before every test.
    code = (
        "import placeviz as pv\n"
        "assert not pv.executing_eagerly()\n"
        "c = pv.constant(2.0)\n"
        "print(str(c) == repr(c) == \"<pv.Tensor 'Const:0' shape=() dtype=float32>\")\n"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"


def test_a_variable_has_no_numpy_value_in_graph_mode() -> None:
    v = pv.Variable(1.0)
    ops = len(pv.get_default_graph().get_operations())
    with pytest.raises(ValueError, match="session"):
        v.numpy()
    assert len(pv.get_default_graph().get_operations()) == ops  # no stray read op
