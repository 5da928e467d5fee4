"""Conformance programs: ``tf.train.Saver``'s graph, its checkpoints and the ``checkpoint`` state
file (issue 24, item 7).

Programs that write files do so in a fresh ``tempfile.mkdtemp()`` and report only what does not
depend on the directory (base names, values), since each backend gets a directory of its own.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program
from conformance.programs import family

__all__: list[str] = []


def _two_variables(tf: Any, pinned: str | None = None) -> tuple[Any, Any]:
    with tf.device(pinned):
        v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(3, name="w")
    return v, w


def _session(tf: Any, cpus: int = 1) -> Any:
    return tf.Session(config=tf.ConfigProto(device_count={"CPU": cpus}))


def _save_and_restore(tf: Any, saver: Any, variables: list[Any], changes: list[Any]) -> Runs:
    """The harness's session saves, overwrites the variables and restores them: every op of the
    Saver runs and is placed."""
    graph = tf.get_default_graph()
    filename = graph.get_tensor_by_name(saver.saver_def.filename_tensor_name)
    save = graph.get_operation_by_name(saver.saver_def.save_tensor_name.split(":")[0])
    restore = graph.get_operation_by_name(saver.saver_def.restore_op_name)
    path = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    overwrite = [tf.assign(v, c) for v, c in zip(variables, changes)]
    return Runs(
        tf.global_variables_initializer(),
        Run(save, {filename: path}),
        overwrite,
        variables,
        Run(restore, {filename: path}),
        variables,
    )


@program(cpus=2)
def saver_graph_pinned_variable(tf: Any) -> Any:
    v, w = _two_variables(tf, "/cpu:1")
    saver = tf.train.Saver()
    return _save_and_restore(tf, saver, [v, w], [[5.0, 6.0], 7])


@program(cpus=2)
def saver_graph_both_pinned(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        v, w = _two_variables(tf)
    saver = tf.train.Saver()
    return _save_and_restore(tf, saver, [v, w], [[5.0, 6.0], 7])


@program
def saver_graph_one_variable(tf: Any) -> Any:
    v = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="weights")
    saver = tf.train.Saver()
    return _save_and_restore(tf, saver, [v], [np.zeros((2, 3), np.float32)])


@program
def saver_graph_dict_var_list(tf: Any) -> Any:
    v, w = _two_variables(tf)
    saver = tf.train.Saver({"b_first": w, "a_second": v})
    return _save_and_restore(tf, saver, [v, w], [[5.0, 6.0], 7])


@program
def saver_graph_subset(tf: Any) -> Any:
    v, w = _two_variables(tf)
    saver = tf.train.Saver([w])
    return _save_and_restore(tf, saver, [v, w], [[5.0, 6.0], 7])


@program
def saver_graph_unsorted_list(tf: Any) -> Any:
    b = tf.Variable(1.0, name="b")
    a = tf.Variable(2.0, name="a")
    c = tf.Variable(3.0, name="c")
    saver = tf.train.Saver([c, b, a])
    return _save_and_restore(tf, saver, [a, b, c], [4.0, 5.0, 6.0])


@program
def saver_graph_dtypes(tf: Any) -> Any:
    values = {
        "f64": np.array([1.5, -2.25]),
        "i64": np.array([[1, 2], [3, 4]], np.int64),
        "flag": np.array([True, False, True]),
        "f16": np.array([0.5, 4.0], np.float16),
        "i32": np.array(7, np.int32),
    }
    variables = [tf.Variable(value, name=name) for name, value in values.items()]
    saver = tf.train.Saver()
    changes = [np.zeros_like(value) for value in values.values()]
    return _save_and_restore(tf, saver, variables, changes)


@program
def saver_graph_named(tf: Any) -> Any:
    v, w = _two_variables(tf)
    saver = tf.train.Saver(name="my_saver")
    return _save_and_restore(tf, saver, [v, w], [[5.0, 6.0], 7])


@program
def saver_graph_inside_name_scope(tf: Any) -> Any:
    v, w = _two_variables(tf)
    with tf.name_scope("outer"):
        saver = tf.train.Saver()
    return _save_and_restore(tf, saver, [v, w], [[5.0, 6.0], 7])


@program
def saver_graph_two_savers(tf: Any) -> Any:
    v, w = _two_variables(tf)
    tf.train.Saver([v])
    saver = tf.train.Saver([w])
    return Note(
        filename=saver.saver_def.filename_tensor_name,
        save=saver.saver_def.save_tensor_name,
        restore=saver.saver_def.restore_op_name,
    )


@program
def saver_graph_with_gradients(tf: Any) -> Any:
    v, _ = _two_variables(tf)
    tf.train.Saver()
    scale = tf.placeholder_with_default(tf.constant(2.0), [], name="scale")
    loss = tf.reduce_sum(v * v * scale, name="loss")
    grads = tf.gradients(loss, [v, scale])
    return Runs(tf.global_variables_initializer(), grads, Run(grads, {scale: 3.0}))


def _saver_def(tf: Any, **options: Any) -> Note:
    _two_variables(tf)
    saver_def = tf.train.Saver(**options).saver_def
    return Note(
        filename_tensor_name=saver_def.filename_tensor_name,
        save_tensor_name=saver_def.save_tensor_name,
        restore_op_name=saver_def.restore_op_name,
        max_to_keep=saver_def.max_to_keep,
        sharded=saver_def.sharded,
        keep_checkpoint_every_n_hours=saver_def.keep_checkpoint_every_n_hours,
        version=int(saver_def.version),
    )


family(
    "saver_def",
    {
        "default": lambda tf: _saver_def(tf),
        "max_to_keep": lambda tf: _saver_def(tf, max_to_keep=2),
        "keep_all": lambda tf: _saver_def(tf, max_to_keep=None),
        "every_hours": lambda tf: _saver_def(tf, keep_checkpoint_every_n_hours=0.5),
    },
)


# -- checkpoints on disk -----------------------------------------------------------------------


def _trained(tf: Any) -> tuple[Any, Any, Any, Any]:
    """Two variables and the global step, initialized and changed in a session of their own."""
    v, w = _two_variables(tf)
    step = tf.train.get_or_create_global_step()
    sess = _session(tf)
    sess.run(tf.global_variables_initializer())
    sess.run([tf.assign(v, [10.0, 20.0]), tf.assign(w, 30)])
    return v, w, step, sess


@program
def saver_round_trip_values(tf: Any) -> Any:
    v, w, step, sess = _trained(tf)
    saver = tf.train.Saver()
    path = saver.save(sess, os.path.join(tempfile.mkdtemp(), "model.ckpt"))
    sess.run([tf.assign(v, [0.0, 0.0]), tf.assign(w, 0)])
    changed = sess.run([v, w])
    saver.restore(sess, path)
    return Note(name=os.path.basename(path), changed=changed, restored=sess.run([v, w, step]))


@program
def saver_global_step_names(tf: Any) -> Any:
    _, _, step, sess = _trained(tf)
    sess.run(tf.assign(step, 42))
    saver = tf.train.Saver()
    prefix = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    named = [saver.save(sess, prefix, global_step=7), saver.save(sess, prefix, global_step=step)]
    padded = tf.train.Saver(pad_step_number=True).save(sess, prefix, global_step=3)
    return Note(names=[os.path.basename(p) for p in [*named, padded]])


@program
def saver_max_to_keep(tf: Any) -> Any:
    _, _, _, sess = _trained(tf)
    saver = tf.train.Saver(max_to_keep=2)
    directory = tempfile.mkdtemp()
    for step in range(4):
        saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step)
    state = tf.train.get_checkpoint_state(directory)
    return Note(
        last=[os.path.basename(p) for p in saver.last_checkpoints],
        latest=os.path.basename(tf.train.latest_checkpoint(directory)),
        state=[os.path.basename(p) for p in state.all_model_checkpoint_paths],
        kept=sorted(
            name
            for name in os.listdir(directory)
            if name.endswith((".index", ".data-00000-of-00001"))
        ),
    )


@program
def saver_same_path_twice(tf: Any) -> Any:
    _, _, _, sess = _trained(tf)
    saver = tf.train.Saver()
    directory = tempfile.mkdtemp()
    for step in (1, 2, 1):
        saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=step)
    return Note(last=[os.path.basename(p) for p in saver.last_checkpoints])


@program
def saver_latest_checkpoint_none(tf: Any) -> Any:
    directory = tempfile.mkdtemp()
    return Note(
        latest=tf.train.latest_checkpoint(directory),
        state=tf.train.get_checkpoint_state(directory),
    )


@program
def saver_list_and_load_variables(tf: Any) -> Any:
    _, _, _, sess = _trained(tf)
    directory = tempfile.mkdtemp()
    path = tf.train.Saver().save(sess, os.path.join(directory, "model.ckpt"), global_step=1)
    return Note(
        variables=[[name, list(shape)] for name, shape in tf.train.list_variables(path)],
        from_directory=[name for name, _ in tf.train.list_variables(directory)],
        v=tf.train.load_variable(directory, "v"),
        w=tf.train.load_variable(path, "w"),
    )


@program
def saver_empty_allowed(tf: Any) -> Any:
    saver = tf.train.Saver(allow_empty=True)
    sess = _session(tf)
    saved = saver.save(sess, os.path.join(tempfile.mkdtemp(), "model.ckpt"))
    return Note(saver_def=saver.saver_def is None, saved=saved)


# -- errors ------------------------------------------------------------------------------------

family(
    "saver_error",
    {
        "no_variables": lambda tf: tf.train.Saver(),
        "empty_list": lambda tf: tf.train.Saver([]),
    },
    error=("No variables to save",),
)


@program(error=("At least two variables have the same name: v",))
def saver_error_duplicate(tf: Any) -> Any:
    v, _ = _two_variables(tf)
    return tf.train.Saver([v, v])


@program(error=("Can't load save_path when it is None",))
def saver_error_restore_none(tf: Any) -> Any:
    _, _, _, sess = _trained(tf)
    tf.train.Saver().restore(sess, None)


@program(error=("The passed save_path is not a valid checkpoint",))
def saver_error_restore_missing(tf: Any) -> Any:
    _, _, _, sess = _trained(tf)
    tf.train.Saver().restore(sess, os.path.join(tempfile.mkdtemp(), "nothing-1"))


@program
def saver_creates_missing_directory(tf: Any) -> Any:
    _, _, _, sess = _trained(tf)
    directory = os.path.join(tempfile.mkdtemp(), "absent")
    path = tf.train.Saver().save(sess, os.path.join(directory, "model.ckpt"))
    return Note(name=os.path.basename(path), latest=tf.train.latest_checkpoint(directory) == path)


def _save_then_restore(tf: Any, first: dict[str, Any], second: dict[str, Any]) -> None:
    sess = _session(tf)
    sess.run(tf.global_variables_initializer())
    path = tf.train.Saver(first).save(sess, os.path.join(tempfile.mkdtemp(), "model.ckpt"))
    tf.train.Saver(second).restore(sess, path)


@program(error=("Restoring from checkpoint failed", "Key w not found in checkpoint"))
def saver_error_missing_key(tf: Any) -> Any:
    v, w = _two_variables(tf)
    _save_then_restore(tf, {"v": v}, {"v": v, "w": w})


@program(error=("Restoring from checkpoint failed", "tensor_name = x", "expected dtype int32"))
def saver_error_dtype_mismatch(tf: Any) -> Any:
    v, w = _two_variables(tf)
    _save_then_restore(tf, {"x": v}, {"x": w})


@program(error=("Restoring from checkpoint failed", "Assign requires shapes of both tensors"))
def saver_error_shape_mismatch(tf: Any) -> Any:
    v, _ = _two_variables(tf)
    u = tf.Variable([1.0, 2.0, 3.0], name="u")
    _save_then_restore(tf, {"x": v}, {"x": u})


# -- PlaceholderWithDefault, the Saver's file name ---------------------------------------------


def _with_default(tf: Any) -> tuple[Any, Any]:
    x = tf.placeholder_with_default([1.0, 2.0], [2], name="x")
    return x, tf.multiply(x, 3.0, name="y")


family(
    "saver_placeholder_with_default",
    {
        "unfed": lambda tf: _with_default(tf)[1],
        "fed": lambda tf: (lambda x, y: Run(y, {x: [5.0, 6.0]}))(*_with_default(tf)),
        "unknown_dim": lambda tf: Note(
            shape=tf.placeholder_with_default([1.0, 2.0], [None]).shape.as_list()
        ),
    },
)


@program(cpus=2)
def saver_placeholder_with_default_pinned(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        x = tf.placeholder_with_default(tf.constant([1, 2]), [2], name="x")
    return tf.add(x, 1, name="y")


# -- realistic graphs ----------------------------------------------------------------------------


@program
def saver_graph_scoped_variables(tf: Any) -> Any:
    with tf.variable_scope("layer"):
        kernel = tf.get_variable("kernel", [2, 2], initializer=tf.ones_initializer())
        bias = tf.get_variable("bias", [2], initializer=tf.zeros_initializer())
    saver = tf.train.Saver()
    return _save_and_restore(tf, saver, [kernel, bias], [np.eye(2, dtype=np.float32), [1.0, 2.0]])


@program(cpus=2)
def saver_graph_after_adam(tf: Any) -> Any:
    with tf.device("/cpu:1"):
        w = tf.Variable([1.0, -2.0], name="w")
    step = tf.train.get_or_create_global_step()
    loss = tf.reduce_sum(w * w, name="loss")
    train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=step)
    saver = tf.train.Saver()
    runs = _save_and_restore(tf, saver, [w], [[0.0, 0.0]])
    return Runs(*runs[:1], train, *runs[1:], tf.global_variables())


@program(error=("Variable to save is not a Variable",))
def saver_error_not_a_variable(tf: Any) -> Any:
    return tf.train.Saver([tf.constant(1.0)])


# -- MonitoredTrainingSession: what it runs and saves (TF's default Saver there is sharded, so
# these compare behaviour only, not the graph) ----------------------------------------------------


def _counting(tf: Any) -> tuple[Any, Any, Any]:
    step = tf.train.get_or_create_global_step()
    w = tf.Variable(0.0, name="w")
    train = tf.group(tf.assign_add(w, 0.5), tf.assign_add(step, 1))
    return step, w, train


def _loop(sess: Any, fetch: Any) -> list[Any]:
    values = []
    while not sess.should_stop():
        values.append(sess.run(fetch))
    return values


def _behaviour(**options: Any) -> Any:
    return program(skip=("graph", "assigned"), **options)


@_behaviour()
def saver_mts_checkpoint_steps(tf: Any) -> Any:
    _, _, train = _counting(tf)
    directory = tempfile.mkdtemp()
    hooks = [tf.train.StopAtStepHook(last_step=10)]
    with tf.train.MonitoredTrainingSession(
        checkpoint_dir=directory, hooks=hooks, save_checkpoint_steps=3
    ) as sess:
        runs = len(_loop(sess, train))
    state = tf.train.get_checkpoint_state(directory)
    return Note(
        runs=runs,
        saved=[os.path.basename(p) for p in state.all_model_checkpoint_paths],
        w_at_6=tf.train.load_variable(os.path.join(directory, "model.ckpt-6"), "w"),
    )


@_behaviour()
def saver_mts_restores_and_continues(tf: Any) -> Any:
    directory = tempfile.mkdtemp()
    with tf.Graph().as_default():
        _, _, train = _counting(tf)
        hooks = [tf.train.StopAtStepHook(last_step=4)]
        with tf.train.MonitoredTrainingSession(checkpoint_dir=directory, hooks=hooks) as sess:
            _loop(sess, train)
    step, w, train = _counting(tf)
    hooks = [tf.train.StopAtStepHook(num_steps=3)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=directory, hooks=hooks) as sess:
        first = sess.run([step, w])
        runs = len(_loop(sess, train))
    return Note(
        first=first,
        runs=runs,
        latest=os.path.basename(tf.train.latest_checkpoint(directory)),
        w=tf.train.load_variable(directory, "w"),
    )


@_behaviour()
def saver_mts_custom_hook(tf: Any) -> Any:
    x = tf.placeholder(tf.float32, [2], name="x")
    total = tf.reduce_sum(x * x, name="total")
    doubled = tf.multiply(x, 2.0, name="doubled")
    seen: list[Any] = []
    calls: list[str] = []

    class Feeder(tf.train.SessionRunHook):
        def begin(self) -> None:
            calls.append("begin")

        def after_create_session(self, session: Any, coord: Any) -> None:
            calls.append("after_create_session")

        def before_run(self, run_context: Any) -> Any:
            calls.append("before_run")
            i = float(len(seen))
            return tf.train.SessionRunArgs({"total": total}, feed_dict={x: [i, i + 1.0]})

        def after_run(self, run_context: Any, run_values: Any) -> None:
            calls.append("after_run")
            seen.append(run_values.results)
            if len(seen) == 3:
                run_context.request_stop()

        def end(self, session: Any) -> None:
            calls.append("end")

    with tf.train.MonitoredTrainingSession(hooks=[Feeder()]) as sess:
        caller = _loop(sess, doubled)
    return Note(seen=seen, caller=caller, calls=calls)


@_behaviour(error=("Global step should be created to use StepCounterHook",))
def saver_mts_checkpoint_dir_needs_global_step(tf: Any) -> Any:
    tf.Variable(1.0, name="v")
    tf.train.MonitoredTrainingSession(checkpoint_dir=tempfile.mkdtemp())


@_behaviour(error=("Run called even after should_stop requested",))
def saver_mts_run_after_stop(tf: Any) -> Any:
    _, _, train = _counting(tf)
    with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(num_steps=2)]) as sess:
        _loop(sess, train)
        sess.run(train)
