"""The %%placement magic in a real Jupyter kernel: the live widget, its stream, the saved output."""

from __future__ import annotations

import os
from typing import Any

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
pytest.importorskip("ipywidgets")

from jupyter_client.manager import start_new_kernel  # noqa: E402

from placeviz.events.html import MIME_TYPE  # noqa: E402
from placeviz.inspector.encoding import decode_events  # noqa: E402

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
    shown = [m for m in messages if m["msg_type"] == "display_data"]
    final = [m for m in messages if m["msg_type"] == "update_display_data"]
    assert len(final) == 1
    assert (
        final[0]["content"]["transient"]["display_id"]
        == shown[-1]["content"]["transient"]["display_id"]
    )
    document = final[0]["content"]["data"][MIME_TYPE]
    gpus = [d["name"] for d in document["devices"] if d["type"] == "GPU"]
    assert len(gpus) == 4 and len(document["runs"]) == 3
    assert "GPU:3" in final[0]["content"]["data"]["text/plain"]


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
    final = [m for m in messages if m["msg_type"] == "update_display_data"]
    document = final[0]["content"]["data"][MIME_TYPE]
    assert [r["status"] for r in document["runs"]] == ["ok", "error"]
