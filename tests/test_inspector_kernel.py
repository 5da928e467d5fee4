"""The %%placement magic in a real Jupyter kernel: the live widget, its stream, the saved output."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")

from jupyter_client.manager import start_new_kernel  # noqa: E402

from placeviz.events.html import MIME_TYPE  # noqa: E402
from placeviz.inspector.encoding import decode_events  # noqa: E402

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

TOWERS = """%%placement --gpus 4
import placeviz as tf
from placeviz.examples.towers import build_towers
total = build_towers()
sess = tf.Session()
for _ in range(3):
    result = sess.run(total)
"""


@pytest.fixture(scope="module")
def kernel(kernel_environment: dict[str, str]):  # type: ignore[no-untyped-def]
    with pytest.MonkeyPatch.context() as monkeypatch:  # the kernelspec is looked up here
        for name, value in kernel_environment.items():
            monkeypatch.setenv(name, value)
        manager, client = start_new_kernel(kernel_name="python3", env=dict(os.environ))
    yield client
    client.stop_channels()
    manager.shutdown_kernel(now=True)


def _execute(client: Any, code: str) -> list[dict[str, Any]]:
    """Run ``code``; every iopub message it caused, until the kernel is idle again."""
    msg_id = client.execute(code)
    messages = []
    while True:
        message = client.get_iopub_msg(timeout=60)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(message)
        content = message["content"]
        if message["msg_type"] == "status" and content["execution_state"] == "idle":
            return messages


def test_a_cell_streams_into_a_widget_then_leaves_the_document(kernel) -> None:
    _execute(kernel, "%load_ext placeviz")
    messages = _execute(kernel, TOWERS)
    kinds = [m["msg_type"] for m in messages]
    assert "error" not in kinds, [m["content"] for m in messages if m["msg_type"] == "error"]
    opened = [m for m in messages if m["msg_type"] == "comm_open"]
    models = [m["content"]["data"]["state"].get("_model_name") for m in opened]
    assert "PlacementInspectorModel" in models
    updates = [
        m
        for m in messages
        if m["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "custom"
    ]
    assert updates, "no live update was sent"
    first = updates[0]["content"]["data"]["content"]
    assert first["kind"] == "update" and first.get("reset") is True
    assert {n["name"] for n in first["tables"]["nodes"]} >= {"MatMul", "AddN"}
    streamed = [decode_events(m["buffers"]) for m in updates]
    assert sum(len(s["kind"]) for s in streamed) == sum(
        m["content"]["data"]["content"]["count"] for m in updates
    )
    runs = [r["id"] for m in updates for r in m["content"]["data"]["content"].get("runs", [])]
    assert runs == [0, 1, 2]
    final = _final_slots(messages)
    inspector = final[_widget_slot(messages)]
    document = inspector[MIME_TYPE]
    gpus = [d["name"] for d in document["devices"] if d["type"] == "GPU"]
    assert len(gpus) == 4 and len(document["runs"]) == 3
    assert "GPU:3" in inspector["text/plain"]
    assert [data[MIME_TYPE] for data in final.values() if MIME_TYPE in data] == [document]


def _final_slots(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each display id's data as the cell left it, in the order the displays were made."""
    slots: dict[str, dict[str, Any]] = {}
    for message in messages:
        if message["msg_type"] in ("display_data", "update_display_data"):
            slots[message["content"]["transient"]["display_id"]] = message["content"]["data"]
    return slots


def _widget_slot(messages: list[dict[str, Any]]) -> str:
    """The display id the live widget was shown in."""
    (shown,) = [
        m
        for m in messages
        if m["msg_type"] == "display_data" and WIDGET_VIEW in m["content"]["data"]
    ]
    return shown["content"]["transient"]["display_id"]


def test_a_failing_cell_still_leaves_the_runs_before_the_error(kernel) -> None:
    _execute(kernel, "%load_ext placeviz")
    cell = (
        "%%placement --gpus 1\nimport placeviz as tf\nx = tf.placeholder(tf.float32)\n"
        "y = tf.reshape(x, [3])\nsess = tf.Session()\nsess.run(y, {x: [1.0, 2.0, 3.0]})\n"
        "sess.run(y, {x: [1.0, 2.0]})\n"
    )
    messages = _execute(kernel, cell)
    errors = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert errors and errors[0]["ename"] == "InvalidArgumentError"
    document = _final_slots(messages)[_widget_slot(messages)][MIME_TYPE]
    assert [r["status"] for r in document["runs"]] == ["ok", "error"]


def test_what_a_cell_prints_shows_above_its_inspector(kernel) -> None:
    _execute(kernel, "%load_ext placeviz")
    cell = (
        "%%placement --log\nimport placeviz as tf\nprint('before the session')\n"
        "y = tf.constant(2.0, name='two') * 3.0\ntf.Session().run(y)\nprint('after the run')\n"
    )
    messages = _execute(kernel, cell)
    widget = _widget_slot(messages)
    shown_at = next(
        i
        for i, m in enumerate(messages)
        if m["msg_type"] == "display_data" and m["content"]["transient"]["display_id"] == widget
    )
    # Nothing the cell printed streams in under the inspector...
    assert not [m for m in messages[shown_at:] if m["msg_type"] == "stream"]
    # ...it is in an output made before it, the placement log (stderr) in the order written.
    slots = list(_final_slots(messages).items())
    text_slots = [
        data["text/plain"] for _, data in slots[: [i for i, _ in slots].index(widget)] if data
    ]
    assert len(text_slots) == 1
    text = text_slots[0]
    positions = [
        text.index(part)
        # TensorFlow's log order: generators (the Consts) after the ops that use them
        for part in ("before the session", "mul: (Mul): ", "two: (Const): ", "after the run")
    ]
    assert positions == sorted(positions)


def _thread_names(client: Any) -> list[str]:
    messages = _execute(
        client, "import threading\nprint(sorted(t.name for t in threading.enumerate()))"
    )
    printed = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    return printed.strip()[2:-2].split("', '")


def test_cells_whose_sink_ops_fail_still_finish_their_inspectors(kernel) -> None:
    _execute(kernel, "%load_ext placeviz")
    before = _thread_names(kernel)
    failing = "%%placement\nimport placeviz as tf\nx = tf.placeholder(tf.float32)\ny = x * 2.0\n"
    for _ in range(3):
        messages = _execute(kernel, failing)
        errors = [m["content"] for m in messages if m["msg_type"] == "error"]
        assert [e["ename"] for e in errors] == ["InvalidArgumentError"]
        assert "placeviz/" not in "".join(errors[0]["traceback"])  # only the error: no frames
        document = _final_slots(messages)[_widget_slot(messages)][MIME_TYPE]
        assert {"Placeholder", "mul"} <= {n["name"] for n in document["nodes"]}
        closed = [m for m in messages if m["msg_type"] == "comm_close"]
        assert closed, "the widget was left open"
    assert _thread_names(kernel) == before


def test_an_error_shows_the_users_frames_from_the_cell_on(kernel) -> None:
    _execute(kernel, "%load_ext placeviz")
    cell = (
        "%%placement\nimport placeviz as tf\nx = tf.placeholder(tf.float32)\n"
        "def run():\n    return tf.Session().run(tf.reshape(x, [2]), {x: [1.0]})\nrun()\n"
    )
    messages = _execute(kernel, cell)
    (error,) = [m["content"] for m in messages if m["msg_type"] == "error"]
    shown = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))  # no colours
    frames = [line for line in shown.splitlines() if line.startswith(("Cell ", "File "))]
    label = f"Cell In[{_execution_count(messages)}]"
    assert [f.split(",")[0] for f in frames] == [label] * 2
    assert "line 6" in frames[0] and "line 5, in run()" in frames[1]
    assert "placeviz" not in shown.replace("import placeviz", "")
    assert f"created at {label}, line 5" in error["evalue"]  # the op's source, as the traceback


def test_an_op_keeps_the_number_of_the_cell_run_that_made_it(kernel) -> None:
    """ipykernel names a cell's compiled file after its text, so a cell run again takes over the
    file, and IPython's number for it: an op's source is labelled when the op is made."""
    _execute(kernel, "%load_ext placeviz\nimport placeviz as tf\nmade = []")
    again = "made.append(tf.constant(1.0))\n"
    counts = [_execution_count(_execute(kernel, again)) for _ in range(2)]
    messages = _execute(kernel, "print([t.op.source for t in made])")
    printed = "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")
    assert printed.strip() == str([f"Cell In[{count}], line 1" for count in counts])
    assert counts[0] < counts[1]


def _execution_count(messages: list[dict[str, Any]]) -> int:
    """The number IPython gives the cell (In[N]), as the kernel announced it."""
    (started,) = [m for m in messages if m["msg_type"] == "execute_input"]
    return int(started["content"]["execution_count"])


DIES = """%%placement --gpus 2
import os, signal, time
import placeviz as tf
a = tf.constant([[1.0, 2.0], [3.0, 4.0]], name='a')
with tf.device('/gpu:1'):
    b = tf.matmul(a, a, name='b')
sess = tf.Session()
for _ in range(3):
    sess.run(b)
print('three runs')
time.sleep(4)  # the saved copy is renewed every 2 s
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_notebook_saved_after_the_kernel_died_keeps_what_the_inspector_had(
    kernel_env: None, tmp_path: Path
) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("%load_ext placeviz"), nbformat.v4.new_code_cell(DIES)]
    )
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=60)
    with pytest.raises(nbclient.exceptions.DeadKernelError):
        client.execute()
    nbformat.write(notebook, tmp_path / "died.ipynb")
    outputs = nbformat.read(tmp_path / "died.ipynb", as_version=4).cells[1].outputs
    kinds = [next(iter(o.get("data", {"": 0}))) for o in outputs]
    text, widget, saved = (kinds.index(k) for k in ("text/plain", WIDGET_VIEW, MIME_TYPE))
    assert text < widget < saved
    assert "three runs" in outputs[text].data["text/plain"]
    document = outputs[saved].data[MIME_TYPE]
    assert [r["status"] for r in document["runs"]] == ["ok"] * 3
    assert {n["name"] for n in document["nodes"]} == {"a", "b"}
    assert [d["type"] for d in document["devices"]].count("GPU") == 2
    # It names the live widget, which the front end shows instead while that is on the page.
    live = outputs[widget].data[WIDGET_VIEW]["model_id"]
    assert outputs[saved].metadata[MIME_TYPE] == {"live_model": live}


def test_printed_text_shows_as_a_terminal_shows_it() -> None:
    from placeviz.inspector.cell_output import as_shown

    bar = "step 1\n\r 10%\r 50%\r100%\r\ndone\r\n\rnext\r"
    assert as_shown(bar) == "step 1\n100%\ndone\nnext"
