"""Conformance programs: queues, conditional accumulators and SyncReplicasOptimizer's graph
(issue 28, item 4). Every run here is one that does not block: each dequeue finds an element
and each take finds enough gradients, so one process shows TensorFlow's semantics."""

from __future__ import annotations

from typing import Any

import numpy as np

from conformance.harness import Note, Run, Runs, program

__all__: list[str] = []


# -- FIFOQueue ---------------------------------------------------------------------------------


def _queue(tf: Any) -> Any:
    return tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[(), (2,)], name="q")


@program(error=["is closed and has insufficient elements"])
def queue_fifo_order_size_close(tf: Any) -> Any:
    q = _queue(tf)
    one = q.enqueue((1, [1.0, 2.0]))
    many = q.enqueue_many(([2, 3], [[3.0, 4.0], [5.0, 6.0]]))
    first = q.dequeue()
    rest = q.dequeue_many(2)
    size = q.size()
    return Runs(one, size, many, size, first, size, rest, size, q.close(), q.dequeue())


@program(error=["is closed"])
def queue_enqueue_after_close(tf: Any) -> Any:
    q = _queue(tf)
    return Runs(q.close(), q.enqueue((1, [1.0, 2.0])))


@program(error=["is closed and has insufficient elements"])
def queue_dequeue_many_after_close(tf: Any) -> Any:
    q = tf.FIFOQueue(5, tf.int64, shapes=[()], shared_name="shared_q")
    return Runs(q.enqueue_many([[4, 5]]), q.close(), q.dequeue(), q.dequeue_many(2))


@program
def queue_graph_facts(tf: Any) -> Any:
    q = tf.FIFOQueue(-1, tf.int64, shapes=(), name="tokens", shared_name="tokens_q")
    unshaped = tf.FIFOQueue(2, [tf.float32, tf.int32])
    named = tf.FIFOQueue(2, [tf.float32, tf.int32], shapes=[[2], []], names=["x", "y"])
    element = named.dequeue()
    batch = q.dequeue_many(4)
    return Note(
        queue=q.queue_ref.name,
        names=[q.name, unshaped.name, named.name],
        dtypes=[d.name for d in named.dtypes],
        shapes=[s.as_list() for s in named.shapes],
        dequeued={k: [v.name, v.shape.as_list(), v.dtype.name] for k, v in element.items()},
        batch=[batch.name, batch.shape.as_list()],
        unshaped=[t.shape.ndims for t in unshaped.dequeue()],
        size=q.size().name,
        close=q.close(cancel_pending_enqueues=True).name,
    )


@program
def queue_requested_devices(tf: Any) -> Any:
    """A queue puts itself on a CPU (keeping the index a GPU scope gives); its ops and an
    accumulator keep the scope's request."""
    with tf.device("/gpu:0"):
        q = tf.FIFOQueue(2, tf.float32, shapes=[()])
        size = q.size()
    with tf.device("/job:ps/task:0/cpu:0"):
        on_ps = tf.FIFOQueue(2, tf.float32, shapes=[()])
    with tf.device("/gpu:1"):
        acc = tf.ConditionalAccumulator(tf.float32, shape=())
    return Note(
        queue=q.queue_ref.op.device,
        size=size.op.device,
        on_ps=on_ps.queue_ref.op.device,
        accumulator=acc.accumulator_ref.op.device,
    )


@program(error=["are incompatible"])
def queue_enqueue_wrong_shape(tf: Any) -> Any:
    return _queue(tf).enqueue((1, [[1.0, 2.0]]))


# -- ConditionalAccumulator --------------------------------------------------------------------


def _accumulator(tf: Any) -> tuple[Any, Any, Any]:
    acc = tf.ConditionalAccumulator(tf.float32, shape=(2,), name="acc")
    grad = tf.placeholder(tf.float32, (2,), name="grad")
    step = tf.placeholder(tf.int64, (), name="step")
    return acc, grad, step


@program
def accumulator_average_stale_dropped(tf: Any) -> Any:
    acc, grad, step = _accumulator(tf)
    apply = acc.apply_grad(grad, local_step=step)
    count = acc.num_accumulated()
    take = acc.take_grad(2)

    def push(g: list[float], s: int) -> Run:
        return Run(apply, {grad: np.array(g, np.float32), step: s})

    return Runs(
        push([1.0, 2.0], 0),
        push([3.0, 8.0], 0),
        count,
        take,  # the mean of two; the accumulator's step is 1 now
        count,
        push([100.0, 100.0], 0),  # stale: dropped
        count,
        push([2.0, 4.0], 1),
        acc.set_global_step(tf.constant(5, tf.int64)),
        push([50.0, 50.0], 3),  # stale after the new global step
        push([6.0, 0.0], 7),  # a step ahead is taken
        count,
        take,
        count,
    )


@program(error=["num_required"])
def accumulator_take_zero(tf: Any) -> Any:
    acc, _, _ = _accumulator(tf)
    return Runs(acc.take_grad(0))


@program
def accumulator_graph_facts(tf: Any) -> Any:
    acc, grad, _ = _accumulator(tf)
    shared = tf.ConditionalAccumulator(tf.float64, shared_name="w/grad_accum")
    return Note(
        ref=[acc.accumulator_ref.name, acc.accumulator_ref.dtype.name],
        names=[acc.name, shared.name],
        dtype=acc.dtype.name,
        apply=acc.apply_grad(grad, local_step=3).name,
        take=[acc.take_grad(1).name, acc.take_grad(1).shape.as_list()],
        unshaped=shared.take_grad(2).shape.ndims,
        count=acc.num_accumulated().name,
        set_step=acc.set_global_step(2, name="SetGlobalStep").name,
    )


# -- SyncReplicasOptimizer ---------------------------------------------------------------------


def _sync_model(tf: Any, replicas: int = 2, total: int | None = None) -> dict[str, Any]:
    """``loss = sum(w * x) + b`` with ``x`` fed: each replica's gradient of ``w`` is its ``x``."""
    w = tf.Variable([1.0, -2.0], name="w")
    b = tf.Variable(0.5, name="b")
    global_step = tf.train.get_or_create_global_step()
    x = tf.placeholder(tf.float32, (2,), name="x")
    loss = tf.reduce_sum(w * x, name="dot") + b
    opt = tf.train.SyncReplicasOptimizer(
        tf.train.GradientDescentOptimizer(0.5),
        replicas_to_aggregate=replicas,
        total_num_replicas=total,
    )
    train = opt.minimize(loss, global_step=global_step)
    return {"w": w, "b": b, "step": global_step, "x": x, "opt": opt, "train": train}


def _sync_note(tf: Any, m: dict[str, Any], hook_is_chief: bool = True) -> Note:
    opt = m["opt"]
    runner = opt.get_chief_queue_runner()
    hook = opt.make_session_run_hook(hook_is_chief, num_tokens=3)
    hook.begin()
    return Note(
        train=m["train"].name,
        chief_init=opt.chief_init_op.name,
        local_step_init=opt.local_step_init_op.name,
        ready=opt.ready_for_local_init_op.name,
        runner_queue=runner.queue.name,
        runner_enqueue=[op.name for op in runner.enqueue_ops],
        runner_close=runner.close_op.name,
        runner_cancel=runner.cancel_op.name,
        init_tokens=opt.get_init_tokens_op().name,
        local=[v.name for v in tf.local_variables()],
        global_=[v.name for v in tf.global_variables()],
        queue_runners=len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)),
    )


@program
def sync_replicas_graph_ps_worker(tf: Any) -> Any:
    with tf.device("/job:ps/task:0/cpu:0"):
        w = tf.Variable([1.0, -2.0], name="w")
        global_step = tf.train.get_or_create_global_step()
    with tf.device("/job:ps/task:1/cpu:0"):
        b = tf.Variable(0.5, name="b")
    with tf.device("/job:worker/task:0/cpu:0"):
        x = tf.placeholder(tf.float32, (2,), name="x")
        loss = tf.reduce_sum(w * x, name="dot") + b
        opt = tf.train.SyncReplicasOptimizer(
            tf.train.GradientDescentOptimizer(0.5), replicas_to_aggregate=2, total_num_replicas=2
        )
        train = opt.minimize(loss, global_step=global_step)
        m = {"w": w, "b": b, "step": global_step, "x": x, "opt": opt, "train": train}
        return _sync_note(tf, m)


@program
def sync_replicas_graph_device_setter(tf: Any) -> Any:
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:1")):
        m = _sync_model(tf, replicas=2, total=3)
        return _sync_note(tf, m, hook_is_chief=False)


@program(error=["Too few tokens"])
def sync_replicas_too_few_tokens(tf: Any) -> Any:
    m = _sync_model(tf, replicas=3, total=1)
    return Note(op=m["opt"].get_init_tokens_op(num_tokens=1).name)


@program(error=["Global step is required"])
def sync_replicas_no_global_step(tf: Any) -> Any:
    w = tf.Variable(1.0, name="w")
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 2)
    return Note(op=opt.minimize(w * w).name)


@program(error=["Should be called after apply_gradients()"])
def sync_replicas_runner_before_apply(tf: Any) -> Any:
    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5), 2)
    return Note(runner=opt.get_chief_queue_runner())


@program
def sync_replicas_steps(tf: Any) -> Any:
    """Two replicas' steps in one session, in an order that never blocks: the tokens, both
    replicas' gradients, the chief's update, then a stale gradient and a fresh one."""
    m = _sync_model(tf)
    opt, train, x = m["opt"], m["train"], m["x"]
    sync = opt.get_chief_queue_runner().enqueue_ops[0]
    counts = [acc.num_accumulated() for acc, _ in opt._accumulator_list]
    queue = opt.get_chief_queue_runner().queue

    def replica(values: list[float]) -> Run:
        return Run(train, {x: np.array(values, np.float32)})

    local_step = tf.local_variables()[0]
    watch = [m["w"], m["b"], m["step"], local_step, queue.size(), *counts]
    return Runs(
        tf.global_variables_initializer(),
        tf.local_variables_initializer(),
        opt.chief_init_op,
        opt.get_init_tokens_op(),
        watch,
        replica([1.0, 2.0]),
        replica([3.0, -4.0]),
        watch,
        sync,
        watch,
        replica([10.0, 10.0]),  # computed at local step 0 < 1: dropped, then takes token 1
        watch,
        replica([5.0, 1.0]),
        watch,
    )
