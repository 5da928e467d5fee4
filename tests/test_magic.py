"""The %%placement magic, run in a real IPython shell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

IPython = pytest.importorskip("IPython")
from IPython.testing.globalipapp import start_ipython  # noqa: E402

import placeviz as pv  # noqa: E402

LOCAL = "/job:localhost/replica:0/task:0/device:"

# The seeds' tower example, as a notebook cell would use it.
TOWERS = """
import placeviz as tf
from placeviz.examples.towers import build_towers
total = build_towers()
result = tf.Session().run(total)
"""


@pytest.fixture(scope="module")
def shell():  # type: ignore[no-untyped-def]
    ip = start_ipython()
    ip.run_line_magic("load_ext", "placeviz")
    return ip


def test_a_cell_on_four_simulated_gpus_keeps_its_trace(
    shell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_cell_magic("placement", "--simulate H100 --gpus 4 --no-widget -o towers", TOWERS)
    out = capsys.readouterr().out
    assert "4 simulated H100 GPU(s) for this cell" in out
    # Two consts and a matmul on each tower's GPU, the sum on the CPU.
    assert f"{LOCAL}GPU:2: 3 ops" in out and f"{LOCAL}CPU:0: 1 ops" in out
    trace = shell.user_ns["towers"]
    assert isinstance(trace, pv.Trace)
    assert shell.user_ns["result"].tolist() == [[44.0, 56.0], [98.0, 128.0]]
    document = trace.to_document()
    devices = {d["id"]: d["name"] for d in document["devices"]}
    nodes = {n["name"]: n for n in document["nodes"]}
    assert devices[nodes["MatMul_1"]["device"]] == f"{LOCAL}GPU:3"
    # The cell's devices were its own: the process still has no simulated GPUs.
    assert pv.config.list_physical_devices("GPU") == []


def test_a_cell_that_runs_nothing_runs_its_sinks(shell, tmp_path: Path) -> None:
    cell = "import placeviz as tf\nx = tf.constant(2.0) * 3.0\ny = tf.square(x)\n"
    chrome = tmp_path / "cell.json"
    shell.run_cell_magic("placement", f"--simulate T4 --trace {chrome}", cell)
    trace = shell.user_ns["_placement"]
    assert [r["status"] for r in trace.runs] == ["ok"]
    assert trace.runs[0]["fetches"] == ["Square"]
    events = json.loads(chrome.read_text())["traceEvents"]
    assert any(e.get("ph") == "X" and e["name"] == "Square" for e in events)


def test_errors_are_ordinary_cell_errors_naming_the_cell_line(shell) -> None:
    cell = (
        "import placeviz as tf\n"
        "x = tf.placeholder(tf.float32)\n"
        "y = tf.reshape(x, [2, 2])\n"
        "tf.Session().run(y, {x: [1.0, 2.0, 3.0]})\n"
    )
    shell.user_ns.pop("_placement", None)
    result = shell.run_cell(f"%%placement --simulate H100 --gpus 2\n{cell}")
    error = result.error_in_exec
    assert isinstance(error, pv.errors.InvalidArgumentError)
    assert "'Reshape'" in str(error) and ":3" in str(error)  # the cell's line that made it
    failed = shell.user_ns["_placement"]  # the failed run's trace is kept
    assert [r["status"] for r in failed.runs] == ["error"]
    shell.run_cell_magic("placement", "--simulate T4", "import placeviz as tf\ntf.constant(1.0)")
    assert shell.user_ns["_placement"].runs[0]["status"] == "ok"  # the shell is still usable


def test_help_lists_the_options(shell) -> None:
    doc = shell.find_cell_magic("placement").__doc__
    for option in ("--gpus", "--simulate", "--soft", "--log", "--trace", "-o", "--no-widget"):
        assert option in doc


def test_soft_and_log_hold_for_the_cell_only(shell, capsys: pytest.CaptureFixture[str]) -> None:
    cell = "import placeviz as tf\nwith tf.device('/gpu:5'):\n    v = tf.constant(1.0) * 2.0\n"
    shell.run_cell_magic("placement", "--soft --log", cell)  # no GPU: soft placement to CPU
    assert "mul: (Mul): /job:localhost/replica:0/task:0/device:CPU:0" in capsys.readouterr().err
    assert not pv.config.get_soft_device_placement()
    assert not pv.debugging.get_log_device_placement()


def test_the_trace_kept_is_of_the_latest_run(shell) -> None:
    cell = (
        "import placeviz as tf\n"
        "first, second = tf.Session(), tf.Session()\n"
        "second.run(tf.constant(1.0, name='early'))\n"
        "first.run(tf.constant(2.0, name='late'))\n"
    )
    shell.run_cell_magic("placement", "", cell)
    assert shell.user_ns["_placement"].runs[-1]["fetches"] == ["late:0"]


def test_a_session_of_a_cell_can_be_traced_after_the_cell(shell) -> None:
    cell = "import placeviz as tf\nsess = tf.Session()\nsess.run(tf.constant(1.0) + 2.0)\n"
    shell.run_cell_magic("placement", "--gpus 2 --no-widget", cell)
    trace = shell.user_ns["sess"].trace()  # outside the cell's device context now
    assert [d["type"] for d in trace.devices].count("GPU") == 2
