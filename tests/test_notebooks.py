"""The teaching notebooks run top to bottom in a real kernel and show what their text promises.

They are executed with nbclient, as a student's "Run All" would, on simulated GPUs (each
``%%placement`` cell asks for ``--gpus N``), so they need no GPU.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

import placeviz as pv  # noqa: E402
from placeviz.contract import EventKind, TimingSource  # noqa: E402
from placeviz.events.document import validate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LOCAL = "/job:localhost/replica:0/task:0/device:"
MIME = "application/vnd.placeviz+json"


def execute(name: str, workdir: Path) -> Any:
    """Run the notebook in ``workdir`` (files it writes land there) and return it with outputs,
    on the ``python3`` kernelspec of the ``kernel_environment`` fixture."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=180,
        allow_errors=False,  # only cells tagged raises-exception may fail
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()
    return notebook


def output_text(cell: Any) -> str:
    """Everything a student reads under a cell: streams, plain-text results, error messages."""
    parts = []
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] == "error":
            parts.append(f"{output['ename']}: {output['evalue']}")
        else:
            parts.append(output.get("data", {}).get("text/plain", ""))
    return "".join(parts)


def errors(cell: Any) -> list[str]:
    """The cell's error outputs, as ``Name: message``."""
    outputs = cell.get("outputs", [])
    return [f"{o['ename']}: {o['evalue']}" for o in outputs if o["output_type"] == "error"]


def placeviz_documents(cell: Any) -> list[dict[str, Any]]:
    """The placement documents a cell's outputs carry for the inspector's MIME renderer."""
    found = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if MIME in data:
            document = data[MIME]
            found.append(json.loads(document) if isinstance(document, str) else document)
    return found


@pytest.fixture(scope="module")
def where_ops_run(
    tmp_path_factory: pytest.TempPathFactory, kernel_environment: dict[str, str]
) -> tuple[dict[str, Any], Path]:
    """notebooks/01_where_ops_run.ipynb executed once, its cells by id, and its working dir."""
    return run_notebook("01_where_ops_run.ipynb", tmp_path_factory, kernel_environment)


@pytest.fixture(scope="module")
def executed(
    tmp_path_factory: pytest.TempPathFactory, kernel_environment: dict[str, str]
) -> Callable[[str], dict[str, Any]]:
    """``executed(name)``: the notebook's cells by id after one run (made on first use). The
    run itself is the check that every cell runs: ``execute`` fails on any cell's error."""
    cells: dict[str, dict[str, Any]] = {}

    def run(name: str) -> dict[str, Any]:
        if name not in cells:
            cells[name] = run_notebook(name, tmp_path_factory, kernel_environment)[0]
        return cells[name]

    return run


def run_notebook(
    name: str, tmp_path_factory: pytest.TempPathFactory, kernel_environment: dict[str, str]
) -> tuple[dict[str, Any], Path]:
    """The notebook executed in a fresh working dir with no simulated GPUs set by the
    environment; its cells by id, and the dir."""
    workdir = tmp_path_factory.mktemp(name.split(".")[0])
    with pytest.MonkeyPatch.context() as monkeypatch:
        for variable, value in kernel_environment.items():
            monkeypatch.setenv(variable, value)
        for variable in ("PLACEVIZ_SIMULATED_GPUS", "PLACEVIZ_SIMULATED_PROFILE"):
            monkeypatch.delenv(variable, raising=False)
        notebook = execute(name, workdir)
    return {cell["id"]: cell for cell in notebook.cells}, workdir


def placement_cells(cells: dict[str, Any]) -> dict[str, Any]:
    return {
        cid: cell
        for cid, cell in cells.items()
        if cell["cell_type"] == "code" and cell["source"].startswith("%%placement")
    }


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_the_saved_notebook_has_no_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, cell["id"]
    assert notebook.metadata.get("widgets") is None  # no saved widget state either


def test_every_code_cell_ran_and_no_untagged_cell_failed(where_ops_run) -> None:
    cells, _ = where_ops_run
    code = [cell for cell in cells.values() if cell["cell_type"] == "code"]
    assert all(cell["execution_count"] is not None for cell in code)
    failed = {cell["id"] for cell in code if errors(cell)}
    tagged = {cell["id"] for cell in code if "raises-exception" in cell.metadata.get("tags", [])}
    assert failed <= tagged <= {"soft-fails"}


def test_a_caught_placement_error_does_not_fail_the_cell(where_ops_run) -> None:
    """JupyterLab's Run All stops at any failed cell, tag or not: the caught error must not
    come back out of ``%%placement`` (it must not re-run the cell's sinks after a failed run)."""
    cells, _ = where_ops_run
    assert errors(cells["soft-fails"]) == []


def test_placement_cells_say_where_their_ops_ran(where_ops_run) -> None:
    cells, _ = where_ops_run
    for cid, cell in placement_cells(cells).items():
        assert "device:GPU:" in output_text(cell), cid


def test_the_placement_log_and_its_reasons(where_ops_run) -> None:
    cells, _ = where_ops_run
    log = output_text(cells["log"])
    assert f"MatMul: (MatMul): {LOCAL}GPU:0" in log
    assert "[[22. 28.]" in log
    summary = output_text(cells["summary"])
    assert f"{LOCAL}GPU:0: 3 ops" in summary and f"{LOCAL}GPU:1: 0 ops" in summary
    assert "no device requested" in output_text(cells["explain"])
    manual = output_text(cells["manual"])
    assert f"a: (Const): {LOCAL}CPU:0" in manual and f"MatMul: (MatMul): {LOCAL}GPU:0" in manual
    reasons = output_text(cells["manual-explain"])
    assert reasons.count("pinned by `with device('/cpu:0')`") == 2


def test_soft_placement_fails_without_soft_and_falls_back_with_it(where_ops_run) -> None:
    cells, _ = where_ops_run
    printed = output_text(cells["soft-fails"])
    assert "InvalidArgumentError: Cannot assign a device for operation 'a'" in printed
    assert "Could not satisfy explicit device specification '/device:GPU:2'" in printed
    assert f"MatMul: (MatMul): {LOCAL}GPU:0" in output_text(cells["soft-ok"])
    assert output_text(cells["soft-explain"]).startswith(
        "soft placement: /device:GPU:2 does not exist, so GPU:0"
    )


def test_towers_run_one_per_gpu_and_write_the_standalone_page(where_ops_run) -> None:
    cells, workdir = where_ops_run
    assert "[[ 88. 112.]" in output_text(cells["towers"])
    summary = output_text(cells["towers-explain"])
    for i in range(4):
        assert f"{LOCAL}GPU:{i}: 3 ops" in summary
    assert f"{LOCAL}CPU:0: 1 ops" in summary
    assert "pinned by `with device('/gpu:3')`" in summary
    assert "4 edges cross devices" in summary
    page = workdir / "towers.html"
    assert page.is_file(), "--html towers.html wrote no file"
    assert 'id="placeviz-document"' in page.read_text("utf-8")


def test_the_guides_own_towers_leave_two_gpus_idle(where_ops_run) -> None:
    cells, _ = where_ops_run
    printed = output_text(cells["towers-seed"])
    assert "[[ 44.  56.]" in printed and f"AddN: (AddN): {LOCAL}CPU:0" in printed
    assert f"MatMul_1: (MatMul): {LOCAL}GPU:3" in printed
    assert f"{LOCAL}GPU:0: " not in printed.split("AddN: (AddN)")[1]  # the summary: idle


def test_tensorflow_2_logs_each_op_where_it_executes(where_ops_run) -> None:
    cells, _ = where_ops_run
    product = "[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)"
    for cid, device in (
        ("tf2-log", "GPU:0"),
        ("tf2-manual", "GPU:0"),
        ("tf2-gpu2", "GPU:2"),
        ("tf2-soft", "GPU:0"),
    ):
        printed = output_text(cells[cid])
        assert product in printed, cid
        assert f"Executing op MatMul in device {LOCAL}{device}" in printed, cid
    assert "_EagerConst" not in output_text(cells["tf2-manual"])  # made on the CPU, unlogged


def test_logical_gpus_share_one_card(where_ops_run) -> None:
    cells, _ = where_ops_run
    assert "1 Physical GPU, 2 Logical GPUs" in output_text(cells["logical"])
    devices = output_text(cells["logical-explain"])
    assert f"MatMul: {LOCAL}GPU:0" in devices and f"MatMul_1: {LOCAL}GPU:1" in devices
    assert devices.count("on /physical_device:GPU:0, memory limit 1024 MiB") == 2


def test_placement_cells_carry_the_inspector_document(where_ops_run) -> None:
    """The saved outputs must hold the inspector's MIME data, so they render without a kernel."""
    cells, _ = where_ops_run
    expected_devices = {
        **{"log": 3, "manual": 3, "soft-ok": 3, "towers": 5, "towers-seed": 5, "logical": 3},
        **{"tf2-log": 3, "tf2-manual": 3, "tf2-gpu2": 5, "tf2-soft": 3},
    }
    for cid, cell in placement_cells(cells).items():
        if cid == "soft-fails":
            continue
        documents = placeviz_documents(cell)
        assert len(documents) == 1, f"{cid}: {MIME} outputs: {len(documents)}"
        validate(documents[0])
        assert len(documents[0]["devices"]) == expected_devices[cid], cid
    towers = placeviz_documents(cells["towers"])[0]
    assert len(towers["nodes"]) == towers_op_count()


def towers_op_count() -> int:
    """Ops in the notebook's tower graph, built again here."""
    pv.reset_default_graph()
    parts = []
    for i in range(4):
        with pv.device(f"/gpu:{i}"):
            a = pv.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3])
            b = pv.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[3, 2])
            parts.append(pv.matmul(a, b))
    with pv.device("/cpu:0"):
        pv.add_n(parts)
    return len(pv.get_default_graph().get_operations())


# -- 07: parameter servers and workers (real task processes on loopback) -----------------------
@pytest.fixture(scope="module")
def parameter_servers(executed: Any) -> dict[str, Any]:
    pytest.importorskip("distributed")
    return executed("07_parameter_servers.ipynb")


def test_parameter_servers_ops_ran_in_their_tasks_processes(parameter_servers) -> None:
    servers = output_text(parameter_servers["servers"])
    pids = {
        line.split()[0]: int(line.rsplit("process ", 1)[1])
        for line in servers.splitlines()
        if "process" in line
    }
    assert len(set(pids.values())) == 4
    where = output_text(parameter_servers["pins-where"])
    ps0, worker0 = pids["/job:ps/task:0"], pids["/job:worker/task:0"]
    assert f"Const: /job:ps/replica:0/task:0/device:CPU:0 (process {ps0})" in where
    assert f"add: /job:worker/replica:0/task:0/device:GPU:1 (process {worker0})" in where
    assert f"add_1: /job:worker/replica:0/task:0/device:GPU:0 (process {worker0})" in where
    pins = output_text(parameter_servers["pins"])
    assert "4.0" in pins and "Dask dashboard http://127.0.0.1:" in pins


def test_parameter_servers_replica_device_setter_as_the_seed_places_it(parameter_servers) -> None:
    round_robin = output_text(parameter_servers["round-robin"])
    assert round_robin.strip() == str(["/job:ps/task:0", "/job:ps/task:1"] * 2 + ["/job:ps/task:0"])
    nested = output_text(parameter_servers["nested"])
    for line in (
        "Variable_1: /job:ps/replica:0/task:1/device:CPU:0",
        "add: /job:worker/replica:0/task:0/device:GPU:0",
        "mul: /job:worker/replica:0/task:0/device:GPU:1",
        "mul_1: /job:worker/replica:0/task:1/device:GPU:1",
    ):
        assert line in nested
    assert "[np.float32(6.0), np.float32(9.0)]" in nested
    machines = output_text(parameter_servers["machines"])
    assert "2 workers" in machines and "/job:ps/task:0" in machines


def test_parameter_servers_round_robin_traffic_and_state(parameter_servers) -> None:
    training = output_text(parameter_servers["setter"])
    losses = [float(line.rsplit(" ", 1)[1]) for line in training.splitlines() if "loss" in line]
    assert losses[-1] < losses[0] and "global_step: 20" in training
    explained = output_text(parameter_servers["setter-explain"])
    assert "hidden/bias: /job:ps/replica:0/task:1/device:CPU:0" in explained
    assert "round robin over 2 ps tasks: variable 2 of 5" in explained
    traffic = output_text(parameter_servers["traffic"])
    # the kernels (576 bytes) and biases (68) out, their gradients back, plus the learning rate
    # (a float32: 4 bytes to each ps task)
    for line in (
        "/job:ps/replica:0/task:0 -> /job:worker/replica:0/task:0: 576 bytes",
        "/job:ps/replica:0/task:1 -> /job:worker/replica:0/task:0: 68 bytes",
        "/job:worker/replica:0/task:0 -> /job:ps/replica:0/task:0: 580 bytes",
        "/job:worker/replica:0/task:0 -> /job:ps/replica:0/task:1: 72 bytes",
    ):
        assert line in traffic
    assert "global_step, read by a new session: 20" in output_text(parameter_servers["state"])
    assert output_text(parameter_servers["reset"]).startswith("FailedPreconditionError")


def test_parameter_servers_cells_carry_documents_with_task_processes(parameter_servers) -> None:
    document = placeviz_documents(parameter_servers["setter"])[0]
    validate(document)
    tasks = {d["name"].split("/device:")[0]: d["pid"] for d in document["devices"]}
    assert len(set(tasks.values())) == 4  # 2 ps + 2 workers, each its own process
    assert all(d["address"].startswith("127.0.0.1:") for d in document["devices"])


# -- 02: GPU memory -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gpu_memory(executed: Any) -> dict[str, Any]:
    return executed("02_gpu_memory.ipynb")


def test_gpu_memory_every_placement_cell_shows_an_inspector(gpu_memory) -> None:
    for cid, cell in placement_cells(gpu_memory).items():
        if "--no-widget" not in cell["source"].splitlines()[0]:
            documents = placeviz_documents(cell)
            assert len(documents) == 1, cid
            validate(documents[0])


def test_gpu_memory_reservations_follow_the_options(gpu_memory) -> None:
    default = output_text(gpu_memory["default"])
    assert "Num GPUs Available:  2" in default
    assert default.count("limit 80.0 GiB, reserved 80.00 GiB") == 2  # GPU:1 ran nothing
    growth = output_text(gpu_memory["growth"])
    assert f"{LOCAL}GPU:0: reserved 10 MiB" in growth and f"{LOCAL}GPU:1: reserved 0 MiB" in growth
    assert "4 Physical GPUs, 4 Logical GPUs" in output_text(gpu_memory["tf2-growth"])
    fraction = output_text(gpu_memory["fraction"])
    assert fraction.count("limit 32.0 GiB, reserved 32.0 GiB") == 2
    assert "GPU:0 limit 60.0 GiB" in output_text(gpu_memory["fraction-try"])
    assert "GPU:0 limit 1.0 GiB" in output_text(gpu_memory["limit"])


def test_gpu_memory_logical_and_visible_devices(gpu_memory) -> None:
    virtual = output_text(gpu_memory["virtual"])
    assert "1 Physical GPU, 2 Logical GPUs" in virtual
    assert f"MatMul_1: {LOCAL}GPU:1 on /physical_device:GPU:0" in virtual
    visible = output_text(gpu_memory["visible"])
    assert "4 Physical GPUs, 1 Logical GPU" in visible
    assert "Could not satisfy explicit device specification '/device:GPU:1'" in visible
    assert "Visible devices cannot be modified after being initialized" in visible


def test_gpu_memory_oom_names_the_op_and_the_trace_keeps_the_failed_run(gpu_memory) -> None:
    printed = output_text(gpu_memory["oom"])
    assert "ResourceExhaustedError" in printed
    assert "OOM when allocating tensor z:0" in printed and "limit 67108864 bytes" in printed
    assert "Largest live tensors: y:0 from 'y' (MatMul): 16777216 bytes" in printed
    (document,) = placeviz_documents(gpu_memory["oom"])
    assert [r["status"] for r in document["runs"]] == ["ok", "error"]
    events = document["events"]
    failed = document["runs"][-1]["id"]
    allocated = [
        size
        for kind, run, size in zip(events["kind"], events["run"], events["bytes"])
        if kind == int(EventKind.ALLOC) and run == failed
    ]
    assert 16777216 in allocated  # y was in memory when z did not fit


# -- 03: parallel execution -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def parallel_execution(executed: Any) -> dict[str, Any]:
    return executed("03_parallel_execution.ipynb")


def test_parallel_execution_placement_cells_show_their_inspector(parallel_execution) -> None:
    for cid in ("branches", "control", "serialise", "function"):
        (document,) = placeviz_documents(parallel_execution[cid])
        validate(document)


def test_parallel_execution_timelines_overlap_and_wait_as_the_text_says(
    parallel_execution,
) -> None:
    branches = output_text(parallel_execution["branches-times"])
    assert "A and C overlap: True" in branches and "B starts after A ends: True" in branches
    waits = output_text(parallel_execution["serialise-times"])
    assert "later starts after first ends: True" in waits
    control = output_text(parallel_execution["control"])
    assert "7.0" in control and "x waits for: ['Const', 'add']" in control
    (document,) = placeviz_documents(parallel_execution["control"])
    assert sum(edge["kind"] == "control" for edge in document["edges"]) == 4  # x, y on a, b


def test_parallel_execution_threads_and_device_functions(parallel_execution) -> None:
    threads = output_text(parallel_execution["threads"])
    times = {
        line.split(":")[0]: float(line.split()[-4])
        for line in threads.splitlines()
        if "ms per run" in line
    }
    assert set(times) == {
        "inter_op=1 intra_op=1",
        "inter_op=0 intra_op=1",
        "inter_op=1 intra_op=2",
    }
    function = output_text(parallel_execution["function"])
    assert f"Variable: {LOCAL}CPU:0" in function and f"mul: {LOCAL}GPU:0" in function
    assert "pinned by device function variables_on_cpu" in function


# -- 04: data parallelism -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data_parallelism(executed: Any) -> dict[str, Any]:
    return executed("04_data_parallelism.ipynb")


def fitted_w(text: str) -> list[float]:
    """The three weights a cell printed as ``[array([[w0], [w1], [w2]], dtype=float32)]``."""
    inside = text.split("[array(", 1)[1].split("dtype", 1)[0]
    return [float(v) for v in inside.replace("[", " ").replace("]", " ").split(",") if v.strip()]


def test_data_parallelism_placement_cells_show_their_inspector(data_parallelism) -> None:
    for cid in placement_cells(data_parallelism):
        (document,) = placeviz_documents(data_parallelism[cid])
        validate(document)


def test_data_parallelism_towers_share_the_work_and_the_fit(data_parallelism) -> None:
    one = output_text(data_parallelism["one-device"])
    assert f"(1000, 100) {LOCAL}GPU:0" in one
    replicas = output_text(data_parallelism["manual-replication"])
    assert "[[ 44.  56.]\n [ 98. 128.]]" in replicas  # two replicas summed
    assert f"Executing op MatMul in device {LOCAL}GPU:1" in replicas
    assert f"Executing op AddN in device {LOCAL}CPU:0" in replicas
    split = output_text(data_parallelism["split"])
    assert "same as one add: True" in split and f"{LOCAL}GPU:1" in split
    assert "(1000, 100)" in output_text(data_parallelism["make-parallel"])
    for cid in ("poly-one", "poly-two"):
        w = fitted_w(output_text(data_parallelism[cid]))
        assert w[0] == pytest.approx(5.0, abs=0.05) and w[1] == pytest.approx(0.0, abs=0.05), cid
    two = output_text(data_parallelism["poly-two"])
    assert "variables: ['w']" in two
    assert f"gradients/MatMul_1_grad/MatMul: {LOCAL}GPU:1" in two
    # x has no static shape, so its matmul is TF's BatchMatMulV2 (named MatMul)
    assert "colocated with 'MatMul_1' (BatchMatMulV2)" in two
    (document,) = placeviz_documents(data_parallelism["poly-two"])
    assert [r["status"] for r in document["runs"]][-1] == "ok"


def test_data_parallelism_averaged_gradients_and_mirrored_strategy(data_parallelism) -> None:
    average = output_text(data_parallelism["average"])
    w = [float(v) for v in average.split("w: [", 1)[1].split("]", 1)[0].split()]
    assert w == pytest.approx([1.0] * 4, abs=0.05)
    assert f"Mean: {LOCAL}CPU:0" in average
    assert f"tower_1/gradients/tower_1/MatMul_grad/tuple/control_dependency_1: {LOCAL}GPU:1" in (
        average
    )
    mirrored = output_text(data_parallelism["mirrored"])
    first, last = (float(v) for v in mirrored.split("loss: ", 1)[1].split()[::2][:2])
    assert last < 0.01 * first
    (document,) = placeviz_documents(data_parallelism["mirrored"])
    gpus = {d["id"] for d in document["devices"] if d["type"] == "GPU"}
    ran = {
        device
        for kind, device in zip(document["events"]["kind"], document["events"]["device"])
        if kind == int(EventKind.OP)
    }
    assert gpus <= ran  # each replica ran on its GPU


# -- 05: training, where things live --------------------------------------------------------------
@pytest.fixture(scope="module")
def where_things_live(executed: Any) -> dict[str, Any]:
    return executed("05_training_where_things_live.ipynb")


def test_where_things_live_placement_cells_show_their_inspector(where_things_live) -> None:
    for cid in ("cpu", "gpu", "slots"):
        (document,) = placeviz_documents(where_things_live[cid])
        validate(document)


def test_where_things_live_devices_and_the_pinned_regression(where_things_live) -> None:
    devices = output_text(where_things_live["devices"])
    assert devices.count('device_type: "GPU"') == 2 and 'name: "/device:CPU:0"' in devices
    cpu = output_text(where_things_live["cpu"])
    # TF 2.21 prints this first line for the seed's program.
    assert "Step 0: loss = 97.0, w = 1.2514286041259766, b = 0.17999999225139618" in cpu
    assert f"weight: (VariableV2): {LOCAL}CPU:0" in cpu and f"Mean: (Mean): {LOCAL}GPU:0" in cpu
    explained = output_text(where_things_live["cpu-explain"])
    assert "mul: CPU:0" in explained and "Mean: GPU:0" in explained
    assert "GradientDescent/update_weight/ApplyGradientDescent: CPU:0" in explained
    crossing = int(explained.split(" edges cross")[0].rsplit("\n", 1)[-1])
    (document,) = placeviz_documents(where_things_live["cpu"])
    assert crossing == sum(edge["crosses"] for edge in document["edges"]) > 0


def test_where_things_live_a_variable_its_ops_and_its_kernels(where_things_live) -> None:
    variable = output_text(where_things_live["variable"])
    assert f"Variable/read: (Identity): {LOCAL}CPU:0" in variable
    assert f"mul: (Mul): {LOCAL}GPU:0" in variable and "12.0" in variable
    assert "colocated with 'Variable'" in variable
    int32 = output_text(where_things_live["int32"])
    assert "no supported kernel for GPU devices is available" in int32
    assert "VariableV2(int32) has kernels for CPU" in int32
    soft = output_text(where_things_live["int32-soft"])
    assert f"{LOCAL}CPU:0" in soft and "there is no GPU kernel for VariableV2(int32)" in soft


def test_where_things_live_unpinned_model_and_optimizer_slots(where_things_live) -> None:
    gpu = output_text(where_things_live["gpu"])
    assert f"weight: {LOCAL}GPU:0" in gpu and "no device requested, so GPU:0" in gpu
    slots = output_text(where_things_live["slots"])
    rows = dict(
        line.split() for line in slots.splitlines() if line.count(":") == 1 and "  " in line
    )
    assert rows["hidden/kernel/Adam"] == rows["hidden/kernel/Adam_1"] == "CPU:0"
    assert rows["out/kernel/Adam"] == "GPU:0" and rows["beta1_power"] == "CPU:0"
    assert "out/kernel/Adam: colocated with 'out/kernel'" in slots


COMPARE_MIME = "application/vnd.placeviz.compare+json"


def comparisons(cell: Any) -> list[dict[str, Any]]:
    """The comparison documents a cell's outputs carry (``--compare``, ``pv.compare``)."""
    found = []
    for output in cell.get("outputs", []):
        data = output.get("data", {}).get(COMPARE_MIME)
        if data is not None:
            found.append(json.loads(data) if isinstance(data, str) else data)
    return found


@pytest.fixture(scope="module")
def automatic_placement(executed: Any) -> dict[str, Any]:
    return executed("06_automatic_placement.ipynb")


def test_automatic_placement_compare_cells_carry_both_placements(automatic_placement) -> None:
    for cid in ("towers", "small", "transformer"):
        (comparison,) = comparisons(automatic_placement[cid])
        assert comparison["labels"] == ["simple", "cost"]
        for document in comparison["documents"]:
            validate(document)
        kinds = {n["reason"]["kind"] for n in comparison["documents"][1]["nodes"]}
        assert "cost" in kinds, cid


def test_automatic_placement_towers_split_and_the_step_shortens(automatic_placement) -> None:
    (comparison,) = comparisons(automatic_placement["towers"])
    simple_ns, cost_ns = comparison["step_ns"]
    assert cost_ns < 0.8 * simple_ns
    moved = {m["name"]: m["to"] for m in comparison["moved"]}
    assert moved["tower1/relu0"].endswith("GPU:1")
    text = output_text(automatic_placement["towers-why"])
    assert re.search(r"tower1/relu0: \[cost\] cost model: earliest finish: GPU:1 at", text), text


def test_automatic_placement_small_towers_stay_on_one_device(automatic_placement) -> None:
    text = output_text(automatic_placement["small-where"])
    where = re.search(r"cost placer: (\{.*\})", text)
    assert where is not None, text
    assert len(set(ast.literal_eval(where.group(1)).values())) == 1, text
    (comparison,) = comparisons(automatic_placement["small"])
    cost = comparison["documents"][1]
    devices = {d["id"]: d["name"] for d in cost["devices"]}
    used = {devices[n["device"]] for n in cost["nodes"] if n["device"] is not None}
    assert not any(name.endswith("GPU:1") for name in used)  # never split over the GPUs


def test_automatic_placement_transformer_and_a_worse_what_if(automatic_placement) -> None:
    text = output_text(automatic_placement["transformer-steps"])
    faster = re.search(r"\(([\d.]+)x faster\)", text)
    assert faster is not None and float(faster.group(1)) > 1.2, text
    (what_if,) = comparisons(automatic_placement["what-if"])
    cost_ns, predicted_ns = what_if["step_ns"]
    assert predicted_ns > cost_ns
    assert what_if["documents"][1]["prediction"] == "what if head0/Softmax on /cpu:0"
    assert [m["name"] for m in what_if["moved"]] == ["head0/Softmax"]
    sources = set(what_if["documents"][1]["events"]["source"])
    assert sources == {int(TimingSource.MODELED)}


def test_automatic_placement_the_scheduling_core_explains_itself(automatic_placement) -> None:
    text = output_text(automatic_placement["core"])
    spans = re.search(r"makespan ([\d.]+) ms \(no schedule can beat ([\d.]+) ms\)", text)
    assert spans is not None and float(spans.group(1)) >= float(spans.group(2)), text
    assert re.search(r"conv_a +GPU:\d: earliest finish: GPU:\d at [\d.]+ ms vs", text), text
    assert re.search(r"conv_b +GPU:\d", text) and "load    CPU:0" in text


@pytest.fixture(scope="module")
def real_models(executed: Any) -> dict[str, Any]:
    return executed("08_real_models.ipynb")


def devices_by_name(document: dict[str, Any]) -> dict[str, str]:
    """Each placed op's device, short (``GPU:1``), from a placement document."""
    devices = {d["id"]: d["name"].rsplit("device:", 1)[-1] for d in document["devices"]}
    return {n["name"]: devices[n["device"]] for n in document["nodes"] if n["device"] is not None}


def printed_devices(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([\w/]+): ((?:CPU|GPU):\d)$", text, re.MULTILINE))


# Where each model's own device scopes put its interesting ops (zoo.py's scopes, 2 GPUs).
REAL_MODEL_OPS = {
    "cifar10": {
        "conv1/weights": "CPU:0",
        "tower_0/conv1/Conv2D": "GPU:0",
        "tower_1/conv1/Conv2D": "GPU:1",
        "tower_1/gradients/tower_1/conv1/Conv2D_grad/Conv2DBackpropFilter": "GPU:1",
        "Mean": "CPU:0",
        "GradientDescent/update_conv1/weights/ApplyGradientDescent": "CPU:0",
    },
    "resnet": {
        "stage1/block1/bn1/FusedBatchNormV3": "GPU:0",
        "stage1/block1/bn1/AssignMovingAvg": "GPU:0",
        "stage2/block1/bn1/FusedBatchNormV3": "GPU:1",
        "stage2/block1/bn1/AssignMovingAvg": "GPU:1",
        "gradients/stage2/block1/conv1/Conv2D_grad/Conv2DBackpropFilter": "GPU:1",
    },
    "bert": {
        "embeddings/word_embeddings": "CPU:0",
        "embeddings/embedding_lookup": "CPU:0",
        "layer_0/attention/query/Tensordot/MatMul": "GPU:0",
        "layer_1/attention/query/Tensordot/MatMul": "GPU:1",
        "layer_1/feed_forward/intermediate/kernel/Adam": "GPU:1",
    },
}
REAL_MODEL_COLOCATIONS = {
    "cifar10": "colocated with 'conv1/weights' (VariableV2)",
    "resnet": "colocated with 'stage2/block1/bn1/moving_mean' (VariableV2)",
    "bert": "colocated with 'embeddings/word_embeddings' (VariableV2)",
}


@pytest.mark.parametrize("model", sorted(REAL_MODEL_OPS))
def test_real_models_train_and_place_their_ops_as_their_scopes_say(real_models, model) -> None:
    cell = real_models[model]
    text = output_text(cell)
    losses = [float(v) for v in re.search(r"^loss: (.*)$", text, re.MULTILINE).group(1).split()]
    assert len(losses) == 5 and all(math.isfinite(v) for v in losses), text
    assert losses[-1] < losses[0], text  # training, not just running
    assert printed_devices(text) == REAL_MODEL_OPS[model], text
    assert REAL_MODEL_COLOCATIONS[model] in text, text
    (document,) = placeviz_documents(cell)
    validate(document)
    placed = devices_by_name(document)
    assert {name: placed[name] for name in REAL_MODEL_OPS[model]} == REAL_MODEL_OPS[model]


def real_model_comparison(real_models: dict[str, Any], model: str) -> dict[str, Any]:
    (comparison,) = comparisons(real_models[f"{model}-compare"])
    assert comparison["labels"] == ["simple", "cost"]
    for document in comparison["documents"]:
        validate(document)
    assert "cost" in {n["reason"]["kind"] for n in comparison["documents"][1]["nodes"]}
    simple = devices_by_name(comparison["documents"][0])
    assert "GPU:1" not in simple.values()  # unpinned: the simple placer's GPU:0 or the CPU
    return comparison


def gpu0_busy_ratio(comparison: dict[str, Any]) -> float:
    return gpu_busy_ratio(comparison, "GPU:0")


def gpu_busy_ratio(comparison: dict[str, Any], gpu: str) -> float:
    """The cost placer's modeled busy time on ``gpu`` over the simple placer's on GPU:0."""
    (gpu0,) = [d for d in comparison["devices"] if d["device"].endswith("GPU:0")]
    (there,) = [d for d in comparison["devices"] if d["device"].endswith(gpu)]
    return there["busy_ns"][1] / gpu0["busy_ns"][0]


def test_real_models_the_cost_placer_rediscovers_cifar10s_towers(real_models) -> None:
    comparison = real_model_comparison(real_models, "cifar10")
    cost = devices_by_name(comparison["documents"][1])
    for tower in (0, 1):
        for op in ("conv1/Conv2D", "conv2/Conv2D", "local3/MatMul", "local4/MatMul"):
            assert cost[f"tower_{tower}/{op}"] == f"GPU:{tower}", op
    assert cost["conv1/weights"] == "CPU:0" and cost["Mean"] != "CPU:0"
    assert 0.35 < gpu0_busy_ratio(comparison) < 0.65  # "about halves"
    text = output_text(real_models["cifar10-found"])
    assert "cost: {'tower_0/conv1/Conv2D': 'GPU:0', 'tower_1/conv1/Conv2D': 'GPU:1'" in text


def test_real_models_the_cost_placer_on_the_resnet_chain(real_models) -> None:
    comparison = real_model_comparison(real_models, "resnet")
    cost = devices_by_name(comparison["documents"][1])
    # The stem on one GPU, the stages on the other (which is which, a tie between alike GPUs)
    stage = cost["stage1/block1/conv1/Conv2D"]
    assert cost["stage2/block1/conv1/Conv2D"] == stage
    assert {cost["stem/Conv2D"], stage} == {"GPU:0", "GPU:1"}
    assert any("bn" in name and device == "CPU:0" for name, device in cost.items())
    assert max(gpu_busy_ratio(comparison, gpu) for gpu in ("GPU:0", "GPU:1")) < 0.6


def test_real_models_the_cost_placer_on_the_encoder(real_models) -> None:
    comparison = real_model_comparison(real_models, "bert")
    simple, cost = (devices_by_name(d) for d in comparison["documents"])
    assert simple["embeddings/embedding_lookup"] == cost["embeddings/embedding_lookup"] == "CPU:0"
    assert cost["layer_0/attention/query/Tensordot/MatMul"] == "GPU:0"
    moved_to = {m["to"].rsplit("device:", 1)[-1] for m in comparison["moved"]}
    assert moved_to == {"CPU:0", "GPU:1"}
    # "part of the layers' work to GPU:1": GPU:0's time down to about half
    assert gpu0_busy_ratio(comparison) < 0.65 and gpu_busy_ratio(comparison, "GPU:1") > 0.15
    text = output_text(real_models["bert-found"])
    assert re.search(r"step: simple \d+ µs, cost \d+ µs\n\d+ ops moved", text), text


@pytest.fixture(scope="module")
def model_parallel_rnn(executed: Any) -> dict[str, Any]:
    return executed("09_model_parallel_rnn.ipynb")


RNN_CELL = "lm/rnn/rnn/multi_rnn_cell/cell_{}/basic_lstm_cell/"
RNN_OPS = {
    "lm/embedding": "CPU:0",
    "lm/embedding_lookup": "CPU:0",
    "lm/rnn/multi_rnn_cell/cell_0/basic_lstm_cell/kernel": "GPU:0",
    RNN_CELL.format(0) + "MatMul_3": "GPU:0",
    "lm/rnn/multi_rnn_cell/cell_1/basic_lstm_cell/kernel": "GPU:1",
    RNN_CELL.format(1) + "MatMul_3": "GPU:1",
    "gradients/" + RNN_CELL.format(1) + "MatMul_3_grad/MatMul": "GPU:1",
    "lm/softmax/MatMul": "GPU:1",
}


def printed_table(text: str, side: str) -> dict[int, list[float]]:
    """A wavefront table the notebook printed: each layer's step start times."""
    block = text.split(f"{side}: ", 1)[1]
    rows = re.findall(r"^layer (\d): ([\d. ]+)$", block, re.MULTILINE)[:2]
    return {int(layer): [float(v) for v in values.split()] for layer, values in rows}


def test_model_parallel_rnn_places_a_layer_per_gpu_and_trains(model_parallel_rnn) -> None:
    cell = model_parallel_rnn["per-gpu"]
    text = output_text(cell)
    losses = [float(v) for v in re.search(r"^loss: (.*)$", text, re.MULTILINE).group(1).split()]
    assert len(losses) == 5 and losses[-1] < losses[0], text
    assert printed_devices(text) == RNN_OPS, text
    assert "pinned by `with device('/gpu:1')`" in text, text
    (document,) = placeviz_documents(cell)
    validate(document)
    placed = devices_by_name(document)
    for layer in range(2):
        ops = [name for name in placed if name.startswith(RNN_CELL.format(layer))]
        assert len(ops) > 8 * 10 and {placed[name] for name in ops} == {f"GPU:{layer}"}


def test_model_parallel_rnn_the_timeline_shows_layers_a_step_apart(model_parallel_rnn) -> None:
    """The tables the notebook prints: forward, layer 1 starts step t between layer 0's starts
    of t + 1 and t + 2; backward, from the last step of the top layer, layer 0 a step behind:
    its step t + 1 (going back in time) runs while layer 1 runs step t."""
    text = output_text(model_parallel_rnn["wavefront"])
    assert "layer l + 1 starts step t while layer l runs step t + 1: True" in text, text
    forward, backward = printed_table(text, "forward"), printed_table(text, "backward")
    for t in range(6):
        assert forward[0][t + 1] < forward[1][t] < forward[0][t + 2], text
    assert backward[1][7] < backward[0][7], text
    for t in range(1, 7):
        layer0 = (backward[0][t + 1], backward[0][t])
        layer1 = (backward[1][t], backward[1][t - 1])
        assert max(layer0[0], layer1[0]) < min(layer0[1], layer1[1]), (t, text)
    assert max(forward[1]) < min(backward[1] + backward[0]), text  # backward after forward


def test_model_parallel_rnn_on_one_gpu_the_layers_take_turns(model_parallel_rnn) -> None:
    text = output_text(model_parallel_rnn["one-gpu-steps"])
    two, one = (float(v) for v in re.search(r"forward pass: (\d+) µs .*, (\d+) µs", text).groups())
    assert two < 0.6 * one, text  # about 8 + 1 cell-steps against 2 x 8
    busy = re.findall(r"busy \{'CPU:0': \d+, 'GPU:0': (\d+)(?:, 'GPU:1': (\d+))?\}", text)
    (gpu0, gpu1), (alone, _) = busy
    assert abs(int(gpu0) + int(gpu1) - int(alone)) < 0.05 * int(alone), text  # the same work
    steps = re.search(r"a layer per GPU: step (\d+) µs", text)
    predicted = re.search(r"what_if\(devices=1\) predicts (\d+) µs", text)
    assert int(predicted.group(1)) > int(steps.group(1)), text
    (comparison,) = comparisons(model_parallel_rnn["one-gpu-steps"])
    assert comparison["labels"] == ["a layer per GPU", "what if one GPU"]
    folded = devices_by_name(comparison["documents"][1])
    assert "GPU:1" not in folded.values()


def test_model_parallel_rnn_the_cost_placer_scatters_the_layers(model_parallel_rnn) -> None:
    """What the notebook says of the cost placer: both GPUs used, GPU:0's busy time about
    halved, and no layer per GPU (each layer's steps on both GPUs, or the layers on one)."""
    (comparison,) = comparisons(model_parallel_rnn["cost"])
    assert comparison["labels"] == ["simple", "cost"]
    for document in comparison["documents"]:
        validate(document)
    simple, cost = (devices_by_name(d) for d in comparison["documents"])
    cells = [n for n in simple if n.startswith(("lm/rnn/rnn/", "gradients/lm/rnn/rnn/"))]
    assert {simple[n] for n in cells} == {"GPU:0"}
    assert {cost[n] for n in cells} >= {"GPU:0", "GPU:1"}
    assert 0.35 < gpu0_busy_ratio(comparison) < 0.65
    text = output_text(model_parallel_rnn["cost-found"])
    rows = dict(re.findall(r"^  layer (\d): ((?:GPU:\d ?)+)$", text, re.MULTILINE))
    devices = [set(rows[layer].split()) for layer in ("0", "1")]
    assert not (len(devices[0]) == len(devices[1]) == 1 and devices[0] != devices[1]), text
    assert "cost model: earliest finish" in text, text


def test_model_parallel_rnn_the_dropout_noise_is_drawn_on_each_layers_gpu(
    model_parallel_rnn,
) -> None:
    text = output_text(model_parallel_rnn["dropout"])
    devices = re.findall(r"^lm/random_uniform(?:_\d)?/RandomUniform: (\S+)$", text, re.MULTILINE)
    assert devices == ["/device:GPU:0"] * 3 + ["/device:GPU:1"] * 3, text


def test_model_parallel_rnn_dynamic_rnn_copies_each_step(model_parallel_rnn) -> None:
    """Section 6: the looped model trains with a smaller graph, layer 0's output crosses to
    GPU:1 once per time step (batch 16 x width 128 floats), and the loop's own values cross
    both ways; each layer's cell stays on its GPU."""
    cell = model_parallel_rnn["looped"]
    text = output_text(cell)
    losses = [float(v) for v in re.search(r"^loss: (.*)$", text, re.MULTILINE).group(1).split()]
    assert len(losses) == 5 and losses[-1] < losses[0], text
    static, dynamic = re.search(r"static_rnn (\d+), dynamic_rnn (\d+)", text).groups()
    assert int(dynamic) < int(static), text
    (document,) = placeviz_documents(cell)
    validate(document)
    placed = devices_by_name(document)
    for layer in range(2):
        prefix = f"lm/rnn/while/rnn/multi_rnn_cell/cell_{layer}/basic_lstm_cell/"
        ops = [name for name in placed if name.startswith(prefix)]
        assert len(ops) > 10 and {placed[name] for name in ops} == {f"GPU:{layer}"}
    copies = output_text(model_parallel_rnn["looped-copies"])
    steps = re.findall(r"iteration (\d): layer 0's output h, GPU:0 → GPU:1, (\d+) B", copies)
    assert steps == [(str(t), str(16 * 128 * 4)) for t in range(8)], copies
    crossing = re.search(r"cross each iteration: (.*)$", copies, re.MULTILINE).group(1)
    assert "'GPU:0', 'GPU:1'" in crossing and "'GPU:1', 'GPU:0'" in crossing, copies


@pytest.fixture(scope="module")
def will_it_fit(executed: Any) -> dict[str, Any]:
    return executed("10_will_it_fit.ipynb")


def split_rows(text: str) -> dict[int, tuple[float, float, str, float | None]]:
    """The table a splits cell printed: per GPU count, the least and most GiB a GPU held,
    'fits' or where it ran out, and the modeled step when it fits."""
    rows = {}
    pattern = r"on (\d) GPU\(s\): +([\d.]+)-([\d.]+) GiB per GPU, (fits|out of memory at \S+)"
    for match in re.finditer(pattern + r"(?:, step ([\d.]+) s)?", text):
        gpus, low, high, verdict, step = match.groups()
        rows[int(gpus)] = (float(low), float(high), verdict, float(step) if step else None)
    return rows


def test_will_it_fit_a_product_no_laptop_computes(will_it_fit) -> None:
    """Section 1: a ShapedArray comes back, timed by the H100's datasheet, holding the
    product's 16 GiB."""
    text = output_text(will_it_fit["product"])
    assert "ShapedArray(shape=(65536, 65536), dtype=float32) = 16 GiB" in text, text
    seconds = float(re.search(r"on an H100: ([\d.]+) s", text).group(1))
    flops = 2 * 65536**3 / pv.devices.profiles.get_profile("H100").fp32_flops
    assert seconds == pytest.approx(flops, rel=0.01), text
    assert "GPU:0 held 16 GiB at most" in text, text


def test_will_it_fit_bert_large_runs_out_on_one_h100_filled_by_activations(will_it_fit) -> None:
    """Section 2: one H100 at batch 64 runs out in the forward pass (a layer past the first
    few, not at the end); what filled it is activations: attention's softmax and its dropout,
    1 GiB a layer each, while the scores are not kept (only an unread gradient would read them,
    a NoOp as in TensorFlow); the variables are a few GiB, and it all adds up to the card."""
    error = output_text(will_it_fit["one-gpu"])
    layer = int(re.search(r"for 'layer_(\d+)/", error).group(1))
    assert 4 <= layer < 24 and "GPU:0" in error and "limit 85899345920 bytes" in error, error
    filled = {
        kind: float(size)
        for kind, size in re.findall(
            r"^ *(\w+) +([\d.]+) GiB", output_text(will_it_fit["filled"]), re.MULTILINE
        )
    }
    assert filled["all"] == pytest.approx(80.0, abs=0.1)
    for kind in ("Softmax", "SelectV2"):  # 1 GiB per layer each
        assert filled[kind] == pytest.approx(layer + 1, abs=1.0), filled
    assert filled.get("BatchMatMulV2", 0) < 2, filled
    assert filled["VariableV2"] < 5 and "Reshape" not in filled and "Identity" not in filled


def test_will_it_fit_bert_needs_two_gpus_gpt_four_and_eight_halve_the_memory(will_it_fit) -> None:
    """Section 3: BERT-large runs out on one H100 and fits on two, the GPT-2-XL-sized decoder
    runs out on one and two and fits on four; eight GPUs hold about half of what four do, each,
    and the step takes as long on eight as on four (the layers still run one after another)."""
    for cell, fewest in (("bert-splits", 2), ("gpt-splits", 4)):
        text = output_text(will_it_fit[cell])
        rows = split_rows(text)
        assert set(rows) == {1, 2, 4, 8}, text
        for gpus in (g for g in (1, 2) if g < fewest):
            assert rows[gpus][2].startswith("out of memory at "), text
            assert rows[gpus][1] > 78, text  # the GPU that ran out was full
        for gpus in (g for g in (2, 4, 8) if g >= fewest):
            assert rows[gpus][2] == "fits" and rows[gpus][1] <= 80, text
        assert rows[8][1] == pytest.approx(rows[4][1] / 2, rel=0.15), text
        assert rows[8][3] == pytest.approx(rows[4][3], rel=0.02), text


def test_will_it_fit_the_inspector_shows_the_dry_step_on_eight_gpus(will_it_fit) -> None:
    cell = will_it_fit["inspector"]
    (document,) = placeviz_documents(cell)
    validate(document)
    assert document["runs"][-1]["dry"] is True
    gpus = {d["name"] for d in document["devices"] if ":GPU:" in d["name"]}
    assert len(gpus) == 8 and len(document["nodes"]) > 20_000
    placed = devices_by_name(document)
    for layer in range(24):
        assert placed[f"layer_{layer}/attention/MatMul"] == f"GPU:{layer * 8 // 24}"


def test_will_it_fit_moving_a_layer_barely_changes_the_step(will_it_fit) -> None:
    text = output_text(will_it_fit["what-if"])
    assert re.match(r"what if \d+ ops of layer_5/ on /gpu:1\n", text), text
    before = float(re.search(r"layer_5 on GPU:0: step ([\d.]+) s", text).group(1))
    after = float(re.search(r"layer_5 on GPU:1: step ([\d.]+) s \(predicted\)", text).group(1))
    assert after == pytest.approx(before, rel=0.01), text


def test_will_it_fit_the_cost_placer_gives_each_gpu_three_consecutive_layers(will_it_fit) -> None:
    """Section 6: unpinned, the cost placer splits BERT-large as the zoo's scopes do, each GPU
    within its 80 GiB, the step as long as the pinned split's, and says why."""
    text = output_text(will_it_fit["cost-placer"])
    parts = re.findall(r"^GPU:(\d): layers (\d+)-(\d+)$", text, re.MULTILINE)
    assert [tuple(map(int, p)) for p in parts] == [(g, 3 * g, 3 * g + 2) for g in range(8)], text
    low, high, step = map(
        float, re.search(r"([\d.]+)-([\d.]+) GiB per GPU, step ([\d.]+) s", text).groups()
    )
    assert high < 80 and high - low < 1, text
    pinned = split_rows(output_text(will_it_fit["bert-splits"]))[8][3]
    assert step == pytest.approx(pinned, rel=0.02), text
    assert "the 8 GPUs take consecutive parts of the step's ops" in text
    assert text.rstrip().endswith("its part is on GPU:6"), text
