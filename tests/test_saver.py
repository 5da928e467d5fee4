"""Saver round trips, checkpoint files and state, and MonitoredTrainingSession with its hooks."""

from __future__ import annotations

import base64
import json
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import placeviz as pv

VALUES = {
    "f32": np.array([[1.5, -2.0], [0.25, 8.0]], np.float32),
    "f64": np.array([np.pi, -np.e]),
    "f16": np.array([0.5, 3.0, -1.0], np.float16),
    "i32": np.array(7, np.int32),
    "i64": np.array([2**40, -3], np.int64),
    "flag": np.array([True, False]),
    "text": np.array([b"abc", b"\x00\xffz", b""], dtype=object),
}


def _variables() -> dict[str, pv.Variable]:
    return {name: pv.Variable(value, name=name) for name, value in VALUES.items()}


def _blank(name: str) -> np.ndarray:
    value = VALUES[name]
    return np.full(value.shape, b"" if value.dtype == object else 0, value.dtype)


def _zeros(variables: dict[str, pv.Variable]) -> list[Any]:
    return [pv.assign(v, _blank(n)) for n, v in variables.items()]


def _assert_values(fetched: list[Any]) -> None:
    for expected, value in zip(VALUES.values(), fetched):
        np.testing.assert_array_equal(np.asarray(value, dtype=expected.dtype), expected)


def test_save_and_restore_round_trip_every_dtype(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        variables = _variables()
        saver = pv.train.Saver()
        sess = pv.Session()
        sess.run(pv.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=np.int64(12))
        assert path == str(tmp_path / "model.ckpt-12")
        sess.run(_zeros(variables))
        assert not sess.run(variables["flag"]).any()
        saver.restore(sess, path)
        _assert_values(sess.run(list(variables.values())))


def test_restore_into_a_new_graph_and_session(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        _variables()
        sess = pv.Session()
        sess.run(pv.global_variables_initializer())
        path = pv.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    with pv.Graph().as_default():
        fresh = {n: pv.Variable(_blank(n), name=n) for n in VALUES}
        sess = pv.Session()
        pv.train.Saver().restore(sess, path)  # no initializer: the restore initializes
        _assert_values(sess.run(list(fresh.values())))


def test_checkpoint_files_are_npz_and_json(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        _variables()
        sess = pv.Session()
        sess.run(pv.global_variables_initializer())
        prefix = pv.train.Saver().save(sess, str(tmp_path / "m"))
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m.data-00000-of-00001", "m.index"]
    index = json.loads(Path(prefix + ".index").read_text())
    assert index["format"] == "placeviz-checkpoint"
    entries = index["tensors"]
    with np.load(prefix + ".data-00000-of-00001", allow_pickle=False) as data:
        stored = {name: data[entry["key"]] for name, entry in entries.items() if "key" in entry}
    assert sorted(stored) == sorted(n for n in VALUES if n != "text")
    text = [base64.b64decode(s) for s in entries["text"]["strings"]]
    assert text == list(VALUES["text"])
    for name, array in stored.items():
        np.testing.assert_array_equal(array, VALUES[name])
        assert array.dtype == VALUES[name].dtype


def test_max_to_keep_deletes_the_oldest(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        pv.Variable(1.0, name="v")
        saver = pv.train.Saver(max_to_keep=2)
        sess = pv.Session()
        sess.run(pv.global_variables_initializer())
        prefix = str(tmp_path / "model.ckpt")
        for step in range(5):
            saver.save(sess, prefix, global_step=step)
    assert saver.last_checkpoints == [f"{prefix}-3", f"{prefix}-4"]
    indexes = sorted(p.name for p in tmp_path.glob("*.index"))
    assert indexes == ["model.ckpt-3.index", "model.ckpt-4.index"]
    assert not list(tmp_path.glob("model.ckpt-2.*"))
    state = pv.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == f"{prefix}-4"
    assert state.all_model_checkpoint_paths == [f"{prefix}-3", f"{prefix}-4"]
    assert pv.train.latest_checkpoint(str(tmp_path)) == f"{prefix}-4"


def test_max_to_keep_none_keeps_every_checkpoint(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        pv.Variable(1.0, name="v")
        saver = pv.train.Saver(max_to_keep=None)
        sess = pv.Session()
        sess.run(pv.global_variables_initializer())
        for step in range(3):
            saver.save(sess, str(tmp_path / "m"), global_step=step)
    assert len(list(tmp_path.glob("*.index"))) == 3
    assert saver.last_checkpoints == []  # as TF: nothing is tracked when nothing is deleted


def test_keep_checkpoint_every_n_hours_spares_old_checkpoints(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        pv.Variable(1.0, name="v")
        every = pv.train.Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1e-12)
        never = pv.train.Saver(max_to_keep=1)
        sess = pv.Session()
        sess.run(pv.global_variables_initializer())
        for step in range(3):
            every.save(sess, str(tmp_path / "every"), global_step=step)
            never.save(sess, str(tmp_path / "never"), global_step=step)
    assert every.last_checkpoints == [str(tmp_path / "every-2")]
    assert len(list(tmp_path.glob("every-*.index"))) == 3  # each one an hour-mark survivor
    assert [p.name for p in tmp_path.glob("never-*.index")] == ["never-2.index"]


def test_relative_paths_in_the_state_file(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        pv.Variable(1.0, name="v")
        saver = pv.train.Saver(save_relative_paths=True)
        sess = pv.Session()
        sess.run(pv.global_variables_initializer())
        saver.save(sess, str(tmp_path / "m"), global_step=1)
    assert 'model_checkpoint_path: "m-1"' in (tmp_path / "checkpoint").read_text()
    assert pv.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "m-1")


def test_latest_checkpoint_without_state_or_files(tmp_path: Path) -> None:
    assert pv.train.latest_checkpoint(str(tmp_path)) is None
    pv.train.update_checkpoint_state(str(tmp_path), str(tmp_path / "gone-3"))
    assert pv.train.get_checkpoint_state(str(tmp_path)).model_checkpoint_path.endswith("gone-3")
    assert pv.train.latest_checkpoint(str(tmp_path)) is None


def test_list_and_load_variables(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        _variables()
        sess = pv.Session()
        sess.run(pv.global_variables_initializer())
        pv.train.Saver().save(sess, str(tmp_path / "m"), global_step=5)
    listed = pv.train.list_variables(str(tmp_path))
    assert listed == sorted((n, list(v.shape)) for n, v in VALUES.items())
    for name, value in VALUES.items():
        loaded = pv.train.load_variable(str(tmp_path / "m-5"), f"{name}:0")
        np.testing.assert_array_equal(loaded, value)
    with pytest.raises(pv.errors.NotFoundError, match="Key nothing not found"):
        pv.train.load_variable(str(tmp_path), "nothing")


def test_saver_ops_run_on_the_cpu_beside_a_pinned_variable(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        with pv.device("/cpu:1"):
            v = pv.Variable([1.0, 2.0], name="v")
        saver = pv.train.Saver()
        sess = pv.Session(config=pv.ConfigProto(device_count={"CPU": 2}))
        sess.run(pv.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "m"))
        saver.restore(sess, path)
        placement = sess.placement
        assert placement["save/SaveV2"].endswith("CPU:0")
        assert placement["save/RestoreV2"].endswith("CPU:0")
        assert placement["save/Assign"].endswith("CPU:1")
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


# -- MonitoredTrainingSession and hooks --------------------------------------------------------


def _counting_model() -> tuple[Any, Any, Any]:
    """A global step and a weight that a step moves by 0.5 toward 10 times the step."""
    step = pv.train.get_or_create_global_step()
    w = pv.Variable(0.0, name="w")
    train = pv.group(pv.assign_add(w, 0.5), pv.assign_add(step, 1))
    return step, w, train


def _train(checkpoint_dir: Path | None, hooks: list[Any], **options: Any) -> tuple[int, int]:
    """Run until the session stops; the number of runs and the final global step."""
    step, _, train = _counting_model()
    runs = 0
    with pv.train.MonitoredTrainingSession(
        checkpoint_dir=str(checkpoint_dir) if checkpoint_dir else None, hooks=hooks, **options
    ) as sess:
        while not sess.should_stop():
            sess.run(train)
            runs += 1
        final = int(sess.raw_session().run(step))
    return runs, final


def test_stop_at_step_hook_stops_at_the_last_step() -> None:
    with pv.Graph().as_default():
        runs, final = _train(None, [pv.train.StopAtStepHook(last_step=7)])
    assert (runs, final) == (7, 7)


def test_checkpoint_saver_hook_saves_every_n_steps_and_at_the_end(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        hooks = [pv.train.StopAtStepHook(last_step=10)]
        _train(tmp_path, hooks, save_checkpoint_steps=3)
    state = pv.train.get_checkpoint_state(str(tmp_path))
    expected = [str(tmp_path / f"model.ckpt-{s}") for s in (0, 3, 6, 9, 10)]
    assert state.all_model_checkpoint_paths == expected
    assert state.model_checkpoint_path == expected[-1]
    np.testing.assert_allclose(pv.train.load_variable(expected[2], "w"), 6 * 0.5)


def test_a_second_session_restores_and_continues(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        _train(tmp_path, [pv.train.StopAtStepHook(last_step=4)], save_checkpoint_steps=100)
    with pv.Graph().as_default():
        step, w, train = _counting_model()
        hooks = [pv.train.StopAtStepHook(num_steps=3)]
        with pv.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path), hooks=hooks) as sess:
            assert sess.run([step, w]) == [4, 2.0]  # restored, not initialized
            runs = 0
            while not sess.should_stop():
                sess.run(train)
                runs += 1
    assert runs == 3
    assert pv.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-7")
    np.testing.assert_allclose(pv.train.load_variable(str(tmp_path), "w"), 7 * 0.5)


class _Recorder(pv.train.SessionRunHook):
    """Feeds ``x`` each run and records what its fetch of ``y`` gave."""

    def __init__(self, x: Any, y: Any) -> None:
        self.x, self.y = x, y
        self.calls: list[str] = []
        self.seen: list[Any] = []

    def begin(self) -> None:
        self.calls.append("begin")

    def after_create_session(self, session: Any, coord: Any) -> None:
        self.calls.append("after_create_session")

    def before_run(self, run_context: Any) -> Any:
        self.calls.append("before_run")
        value = float(len(self.seen))
        return pv.train.SessionRunArgs({"y": self.y}, feed_dict={self.x: [value, 2 * value]})

    def after_run(self, run_context: Any, run_values: Any) -> None:
        self.calls.append("after_run")
        self.seen.append(run_values.results["y"])
        if len(self.seen) == 3:
            run_context.request_stop()

    def end(self, session: Any) -> None:
        self.calls.append("end")


def test_a_hook_feeds_fetches_and_stops() -> None:
    with pv.Graph().as_default():
        x = pv.placeholder(pv.float32, [2], name="x")
        y = pv.reduce_sum(x * x, name="y")
        tripled = x * 3.0
        hook = _Recorder(x, y)
        caller = []
        with pv.train.MonitoredSession(hooks=[hook]) as sess:
            while not sess.should_stop():
                caller.append(sess.run(tripled))
            with pytest.raises(RuntimeError, match="Run called even after should_stop"):
                sess.run(y)
    fed = [np.array([i, 2 * i], np.float32) for i in range(3)]
    np.testing.assert_allclose(hook.seen, [np.sum(f * f) for f in fed])
    np.testing.assert_allclose(caller, [3 * f for f in fed])
    assert hook.calls == (
        ["begin", "after_create_session"] + ["before_run", "after_run"] * 3 + ["end"]
    )


def test_a_hook_and_the_caller_feeding_one_tensor_is_an_error() -> None:
    with pv.Graph().as_default():
        x = pv.placeholder(pv.float32, [2], name="x")
        y = pv.reduce_sum(x, name="y")
        with (
            pv.train.MonitoredSession(hooks=[_Recorder(x, y)]) as sess,
            pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"),
        ):
            sess.run(y, feed_dict={x: [1.0, 1.0]})


def test_the_graph_is_finalized_while_the_session_is_open() -> None:
    with pv.Graph().as_default() as graph:
        _counting_model()
        with pv.train.MonitoredSession() as sess:
            assert graph.finalized
            with pytest.raises(RuntimeError, match="Graph is finalized"):
                pv.constant(1.0)
            assert sess.graph is graph
        assert not graph.finalized


def test_a_worker_neither_initializes_nor_runs_chief_only_hooks(tmp_path: Path) -> None:
    """It waits for the chief to initialize the model: with no chief, until its deadline."""
    with pv.Graph().as_default():
        _counting_model()
        chief_only = _Recorder(None, None)
        with pytest.raises(
            pv.errors.DeadlineExceededError, match=r"Session was not ready after waiting 0 secs\."
        ):
            pv.train.MonitoredTrainingSession(
                is_chief=False,
                checkpoint_dir=str(tmp_path),
                chief_only_hooks=[chief_only],
                max_wait_secs=0,
            )
    assert chief_only.calls == []
    assert pv.train.latest_checkpoint(str(tmp_path)) is None


def test_a_worker_starts_once_the_chief_made_the_model_ready(monkeypatch) -> None:
    """TF's SessionManager.wait_for_session: each try a new session; here the chief's session
    (another client of the same state) initializes between two tries."""
    from placeviz.runtime.state import SessionState
    from placeviz.train import monitored_session

    state = SessionState()
    monkeypatch.setattr(monitored_session, "RECOVERY_WAIT_SECS", 0)
    made = []
    chief_init: list[pv.Operation] = []

    def shared(*args: Any, **kwargs: Any) -> pv.Session:
        made.append(pv.Session(*args, **kwargs, _state=state))
        if len(made) == 2:  # the chief comes in between the worker's first and second try
            pv.Session(_state=state).run(chief_init[0])
        return made[-1]

    monkeypatch.setattr(monitored_session, "Session", shared)
    with pv.Graph().as_default():
        step, w, train = _counting_model()
        chief_init.append(pv.global_variables_initializer())
        with pv.train.MonitoredTrainingSession(is_chief=False, max_wait_secs=60) as sess:
            sess.run(train)
            assert sess.run([step, w]) == [1, 0.5]
    assert len(made) == 2


def test_an_error_in_the_loop_closes_without_ending_the_hooks() -> None:
    with pv.Graph().as_default():
        x = pv.placeholder(pv.float32, [2], name="x")
        hook = _Recorder(x, pv.reduce_sum(x))
        with pytest.raises(ZeroDivisionError), pv.train.MonitoredSession(hooks=[hook]) as sess:
            sess.run(hook.y)
            raise ZeroDivisionError
        assert "end" not in hook.calls
        assert sess.should_stop()  # closed


def test_logging_tensor_hook_logs_every_n_iterations(caplog: pytest.LogCaptureFixture) -> None:
    with pv.Graph().as_default():
        step, w, train = _counting_model()
        with pv.control_dependencies([train]):
            loss = pv.identity(w * 2.0, name="loss")
        hooks = [
            pv.train.LoggingTensorHook({"loss": loss, "step": step}, every_n_iter=2),
            pv.train.LoggingTensorHook(["loss"], at_end=True, formatter=lambda v: f"end {v}"),
            pv.train.StopAtStepHook(last_step=5),
        ]
        with (
            caplog.at_level(logging.INFO, logger="placeviz"),
            pv.train.MonitoredTrainingSession(hooks=hooks) as sess,
        ):
            while not sess.should_stop():
                sess.run(loss)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("loss")]
    # Iterations 0, 2 and 4 log the loss after that run's step: 2 * 0.5 * (i + 1).
    assert [line.split(" (")[0].split(", ")[0] for line in lines] == [
        f"loss = {2 * 0.5 * (i + 1)}" for i in (0, 2, 4)
    ]
    assert lines[0].count("sec)") == 0 and all(line.endswith("sec)") for line in lines[1:])
    ends = [r.getMessage() for r in caplog.records if r.getMessage().startswith("end ")]
    # end() runs the loss once more, and with it one more step.
    assert ends == ["end {'loss': " + repr(np.float32(2 * 0.5 * 6)) + "}"]


@pytest.mark.parametrize(
    ("hook", "words"),
    [
        (lambda: pv.train.StopAtStepHook(last_step=3), "to use StopAtStepHook"),
        (lambda: pv.train.CheckpointSaverHook("dir", save_steps=1), "to use CheckpointSaverHook"),
    ],
)
def test_hooks_need_the_global_step(hook: Any, words: str) -> None:
    with pv.Graph().as_default():
        pv.Variable(1.0, name="v")
        with pytest.raises(RuntimeError, match=f"Global step should be created {words}"):
            pv.train.MonitoredSession(hooks=[hook()])


def test_checkpoint_dir_needs_the_global_step(tmp_path: Path) -> None:
    with pv.Graph().as_default():
        pv.Variable(1.0, name="v")
        with pytest.raises(RuntimeError, match="Global step should be created"):
            pv.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path))


def test_hook_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="One of num_steps or last_step must be specified"):
        pv.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Either every_secs or every_steps should be provided"):
        pv.train.CheckpointSaverHook("dir")
    with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
        pv.train.LoggingTensorHook(["x"])
