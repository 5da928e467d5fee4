"""The %%placement magic, run in a real IPython shell."""

from __future__ import annotations

import json
import os
import threading
import unicodedata
import urllib.request
from pathlib import Path

import pytest

IPython = pytest.importorskip("IPython")
from IPython.core.error import UsageError  # noqa: E402
from IPython.testing.globalipapp import start_ipython  # noqa: E402

import placeviz as pv  # noqa: E402
from placeviz.contract import EventKind  # noqa: E402

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
    count = shell.execution_count
    result = shell.run_cell(f"%%placement --simulate H100 --gpus 2\n{cell}")
    error = result.error_in_exec
    assert isinstance(error, pv.errors.InvalidArgumentError)
    # The cell's line that made it, as IPython's tracebacks name it (the magic's line is line 1).
    assert f"'Reshape' (Reshape) created at Cell In[{count}], line 4," in str(error)
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


def test_ops_of_a_cell_name_its_lines_as_ipython_does(shell) -> None:
    count = shell.execution_count
    cell = "import placeviz as tf\n\nx = tf.constant(1.0, name='x')\ny = tf.square(x, name='y')\n"
    shell.run_cell(f"%%placement --no-widget -o lines\n{cell}")
    nodes = {n["name"]: n for n in shell.user_ns["lines"].to_document()["nodes"]}
    assert nodes["x"]["source"] == f"Cell In[{count}], line 4"
    assert nodes["y"]["source"] == f"Cell In[{count}], line 5"


def test_an_error_shows_from_the_cell_on(shell, capsys: pytest.CaptureFixture[str]) -> None:
    cell = (
        "import placeviz as tf\nx = tf.placeholder(tf.float32)\n"
        "tf.Session().run(tf.reshape(x, [2]), {x: [1.0]})\n"
    )
    shell.run_cell(f"%%placement --no-widget\n{cell}")
    shown = capsys.readouterr().out
    assert "Traceback" in shown and "----> 4 tf.Session().run(" in shown
    # Not IPython's cell-magic call, the magic, nor placeviz's session, executor or kernels.
    for internal in ("run_cell_magic", "magic.py", "session.py", "executor.py", "numpy"):
        assert internal not in shown
    assert "InvalidArgumentError: Input to reshape is a tensor with 1 values" in shown


def test_cells_running_at_once_keep_their_own_devices_and_graph(shell) -> None:
    """A cell run from a thread beside another: each has its devices, graph and sessions."""
    shell.user_ns.update(b_built=threading.Event(), a_built=threading.Event())
    cell_b = (
        "import placeviz as tf\nb = tf.constant(1.0, name='b_only') * 2.0\nb_built.set()\n"
        "assert a_built.wait(30)\nsb = tf.Session()\nsb.run(b)\n"
    )
    cell_a = (
        "import placeviz as tf\nassert b_built.wait(30)\n"
        "a = tf.constant(1.0, name='a_only') + 1.0\na_built.set()\nsa = tf.Session()\nsa.run(a)\n"
    )
    failures: list[BaseException] = []

    def run_b() -> None:
        try:
            shell.run_cell_magic("placement", "--gpus 3 --no-widget -o trace_b", cell_b)
        except BaseException as error:  # reported by the test, in its thread
            failures.append(error)

    thread = threading.Thread(target=run_b)
    thread.start()
    shell.run_cell_magic("placement", "--gpus 1 --no-widget -o trace_a", cell_a)
    thread.join(60)
    assert not failures
    for output, own, other, gpus in (
        ("trace_a", "a_only", "b_only", 1),
        ("trace_b", "b_only", "a_only", 3),
    ):
        trace = shell.user_ns[output]
        names = {n["name"] for n in trace.to_document()["nodes"]}
        assert own in names and other not in names, output
        assert [d["type"] for d in trace.devices].count("GPU") == gpus, output
        assert [r["status"] for r in trace.runs] == ["ok"], output
    assert pv.config.list_physical_devices("GPU") == []


def test_names_show_their_control_and_format_characters_as_escapes() -> None:
    from placeviz.inspector.summary import visible_text

    assert visible_text("safe\u202egnp.exe") == "safe\\u202egnp.exe"
    hidden = "".join(
        chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in ("Cc", "Cf")
    )
    shown = visible_text(f"a{hidden}b")
    assert shown.startswith("a\\u0000") and shown.endswith("\\U000e007fb")
    assert all(unicodedata.category(ch) not in ("Cc", "Cf") for ch in shown)
    assert visible_text("MatMul_1/ópération") == "MatMul_1/ópération"


def test_the_summary_shows_device_names_escaped(shell, capsys: pytest.CaptureFixture[str]) -> None:
    from placeviz.inspector.summary import summary_text

    shell.run_cell_magic(
        "placement", "--no-widget -o plain", "import placeviz as tf\ntf.constant(1.0)"
    )
    capsys.readouterr()
    trace = shell.user_ns["plain"]
    trace.devices[0]["name"] = "/job:safe\u202egnp.exe/device:CPU:0"
    assert summary_text(trace).startswith("/job:safe\\u202egnp.exe/device:CPU:0: 1 ops")


def test_threads_a_cell_starts_build_in_its_graph(shell) -> None:
    cell = (
        "import threading\nimport placeviz as tf\ntf.constant(1.0, name='main')\n"
        "worker = threading.Thread(target=lambda: tf.constant(2.0, name='worker'))\n"
        "worker.start()\nworker.join()\n"
    )
    shell.run_cell_magic("placement", "--no-widget -o threaded", cell)
    assert {n["name"] for n in shell.user_ns["threaded"].to_document()["nodes"]} == {
        "main",
        "worker",
    }


def test_a_cell_with_its_own_flags_locks_the_process_devices_as_a_session_does(shell) -> None:
    shell.run_cell_magic(
        "placement", "--soft --no-widget", "import placeviz as tf\ntf.constant(1.0)"
    )
    with pytest.raises(RuntimeError, match="cannot be modified after being initialized"):
        pv.config.simulate_gpus(2)


def test_the_failure_of_the_sink_ops_shows_no_frames(
    shell, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sink ops the magic runs after the cell fail: only the error, which says where."""
    cell = "import placeviz as tf\ny = tf.placeholder(tf.float32)\n"
    shell.run_cell(f"%%placement --no-widget\n{cell}")
    shown = capsys.readouterr().out
    assert "InvalidArgumentError" in shown and "created at Cell In[" in shown
    for internal in ("run_cell_magic", "magic.py", "session.py", "executor.py"):
        assert internal not in shown


def test_a_syntax_error_names_the_cells_line(shell, capsys: pytest.CaptureFixture[str]) -> None:
    count = shell.execution_count
    shell.run_cell("%%placement --no-widget\nimport placeviz as tf\nx = (\n")
    shown = capsys.readouterr().out
    # IPython shows a SyntaxError's stack itself (no _render_traceback_): the magic's frames stay.
    assert f"Cell In[{count}], line 3\n    x = (" in shown and "SyntaxError" in shown


# A seed-002 program as a cell: the model's variable on the ps task, its math on the worker.
CLUSTER_CELL = """
import placeviz as tf
with tf.device(tf.train.replica_device_setter(cluster=_cluster)):
    w = tf.Variable(tf.ones([2, 2]), name="w")
    y = tf.matmul(w, w)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    result = sess.run(y)
"""


def test_a_cell_runs_on_a_local_cluster_started_once_per_kernel(
    shell, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("distributed")
    from placeviz.cluster.local import stop_local_clusters

    try:
        shell.run_cell_magic("placement", "--cluster ps=1,worker=2 --no-widget", CLUSTER_CELL)
        first = capsys.readouterr().out
        assert "Dask dashboard http://127.0.0.1:" in first
        dashboard = first.split("Dask dashboard ")[1].split()[0]
        with urllib.request.urlopen(dashboard, timeout=10) as page:  # served, on loopback
            assert page.status == 200 and b"Dask" in page.read()
        assert shell.user_ns["result"].tolist() == [[2.0, 2.0], [2.0, 2.0]]
        trace = shell.user_ns["_placement"]
        where = {n["name"]: trace.devices[n["device"]] for n in trace.nodes}
        assert where["w"]["name"] == "/job:ps/replica:0/task:0/device:CPU:0"
        assert where["MatMul"]["name"].startswith("/job:worker/replica:0/task:0/")
        assert where["w"]["pid"] != where["MatMul"]["pid"] != os.getpid()
        assert "/job:ps/replica:0/task:0" in first  # the summary lists each task's devices
        shell.run_cell_magic("placement", "--cluster ps=1,worker=2 --no-widget", CLUSTER_CELL)
        again = capsys.readouterr().out
        processes = first.split("task processes: ")[1].split(")")[0]
        assert f"task processes: {processes})" in again  # the same processes, reused
        # A ClusterSpec variable: its running servers.
        shell.user_ns["spec"] = shell.user_ns["_cluster"]
        shell.run_cell_magic("placement", "--cluster spec --no-widget", CLUSTER_CELL)
        assert "task processes" not in capsys.readouterr().out
        assert shell.user_ns["_placement"].devices[0]["pid"] == where["w"]["pid"]
    finally:
        stop_local_clusters()


def test_compare_runs_the_cell_with_each_placer(shell) -> None:
    shell.run_cell("import numpy as np, placeviz as pv")
    cell = (
        "x = pv.constant(np.ones((512, 1024), np.float32), name='x')\n"
        "outs = []\n"
        "for i in range(2):\n"
        "    w = pv.Variable(pv.ones([1024, 1024]), name=f'w{i}')\n"
        "    h = x\n"
        "    for layer in range(4):\n"
        "        h = pv.nn.relu(pv.matmul(h, w))\n"
        "    outs.append(pv.matmul(h, w, name=f'out{i}'))\n"
        "y = pv.add_n(outs)\n"
        "with pv.Session() as s:\n"
        "    s.run(pv.global_variables_initializer())\n"
        "    s.run(y)\n"
    )
    shell.run_cell_magic("placement", "--gpus 2 --compare simple,cost --no-widget -o cmp", cell)
    comparison = shell.user_ns["cmp"]
    assert comparison.labels == ("simple", "cost")
    moved = {m.name for m in comparison.moved}
    assert "out1" in moved or "out0" in moved
    assert comparison.step_s[1] < comparison.step_s[0]
    with pytest.raises(UsageError, match="--compare shows two traces"):
        shell.run_cell_magic("placement", "--compare simple,cost --trace t.json", cell)
    with pytest.raises(UsageError, match="two placers"):
        shell.run_cell_magic("placement", "--compare simple,fastest --no-widget", cell)


def test_a_dry_run_cell_computes_and_allocates_nothing(
    shell, capsys: pytest.CaptureFixture[str]
) -> None:
    cell = (
        "import placeviz as tf\n"
        "with tf.device('/gpu:0'):\n"
        "    big = tf.matmul(tf.ones([65536, 65536]), tf.ones([65536, 65536]))\n"
        "result = tf.Session().run(big)\n"
    )
    shell.run_cell_magic("placement", "--simulate H100 --gpus 1 --dry-run --no-widget -o t", cell)
    assert "Dry runs: nothing is computed" in capsys.readouterr().out
    assert shell.user_ns["result"] == pv.ShapedArray([65536, 65536], pv.float32)
    events = shell.user_ns["t"].events
    allocated = events["bytes"][events["kind"] == int(EventKind.ALLOC)]
    assert allocated.max() == 65536 * 65536 * 4  # 16 GiB, on paper
    # The next cell's sessions are real again.
    shell.run_cell_magic(
        "placement", "--no-widget", "import placeviz as tf\nr = tf.Session().run(tf.ones([2]))"
    )
    assert shell.user_ns["r"].tolist() == [1.0, 1.0]
