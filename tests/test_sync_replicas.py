"""Synchronous replicas (issue 28, item 4): queues, conditional accumulators, queue runners and
SyncReplicasOptimizer, against TensorFlow's definitions computed here with NumPy.

One session runs the replicas' train ops and the chief's sync op in turn, in orders that never
wait; waiting is shown by two sessions over one state (as two clients of one cluster task share
its queues and variables), one of them blocked in a thread until the other runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest

import placeviz as pv
from placeviz.runtime.state import SessionState

LEARNING_RATE = 0.5
W0 = np.array([1.0, -2.0], np.float32)
B0 = np.float32(0.5)


class SyncReference:
    """TF's documented semantics, per step: a gradient computed at a local step older than the
    global step is dropped; the chief applies the mean of the gradients accepted since its last
    update once (plain gradient descent), increments the global step and hands out
    ``tokens_per_step`` tokens holding it; a replica's local step is the last token it took."""

    def __init__(self, tokens_per_step: int, init_tokens: int, replicas: int = 1) -> None:
        self.w, self.b, self.step = W0.astype(np.float64), np.float64(B0), 0
        self.tokens = [0] * init_tokens
        self.tokens_per_step = tokens_per_step
        self.local = [0] * replicas
        self.accepted: list[np.ndarray] = []
        self.dropped = 0

    def apply(self, x: np.ndarray, replica: int = 0) -> None:
        if self.local[replica] >= self.step:  # d loss / d w = x, d loss / d b = 1
            self.accepted.append(x.astype(np.float64))
        else:
            self.dropped += 1

    def take_token(self, replica: int = 0) -> None:
        self.local[replica] = self.tokens.pop(0)

    def replica(self, x: np.ndarray) -> None:
        """One train op of a replica: its gradients, then a token."""
        self.apply(x)
        self.take_token()

    def chief(self) -> None:
        self.w = self.w - LEARNING_RATE * np.mean(self.accepted, axis=0)
        self.b = self.b - LEARNING_RATE * 1.0
        self.accepted = []
        self.step += 1
        self.tokens += [self.step] * self.tokens_per_step


def build(replicas: int, total: int | None = None) -> dict[str, object]:
    """``loss = sum(w * x) + b`` with ``x`` fed, each replica's gradient of ``w`` its ``x``."""
    w = pv.Variable(W0, name="w")
    b = pv.Variable(B0, name="b")
    step = pv.train.get_or_create_global_step()
    x = pv.placeholder(pv.float32, (2,), name="x")
    loss = pv.reduce_sum(w * x) + b
    opt = pv.train.SyncReplicasOptimizer(
        pv.train.GradientDescentOptimizer(LEARNING_RATE),
        replicas_to_aggregate=replicas,
        total_num_replicas=total,
    )
    train = opt.minimize(loss, global_step=step)
    return {"w": w, "b": b, "step": step, "x": x, "opt": opt, "train": train}


def start(sess: pv.Session, model: dict[str, object], num_tokens: int = -1) -> None:
    """What the chief's hook runs before the replicas start (its queue runner aside)."""
    opt = model["opt"]
    sess.run([pv.global_variables_initializer(), pv.local_variables_initializer()])
    sess.run(opt.chief_init_op)
    sess.run(opt.get_init_tokens_op(num_tokens))


def check(sess: pv.Session, model: dict[str, object], ref: SyncReference) -> None:
    w, b, step = sess.run([model["w"], model["b"], model["step"]])
    np.testing.assert_allclose(w, ref.w, rtol=1e-6)
    np.testing.assert_allclose(b, ref.b, rtol=1e-6)
    assert step == ref.step
    local = pv.local_variables()[0]
    assert sess.run(local) == ref.local[0]


def test_two_replicas_average_their_gradients_once_per_global_step() -> None:
    model = build(replicas=2, total=3)  # a backup replica: 3 tokens per step
    opt, train, x = model["opt"], model["train"], model["x"]
    sync = opt.get_chief_queue_runner().enqueue_ops[0]
    ref = SyncReference(tokens_per_step=3, init_tokens=2)
    rng = np.random.default_rng(7)
    with pv.Session() as sess:
        start(sess, model)
        check(sess, model, ref)
        for _ in range(3):
            while len(ref.accepted) < 2:
                assert ref.tokens, "the replica would wait for a token"
                value = rng.normal(size=2).astype(np.float32)
                sess.run(train, {x: value})
                ref.replica(value)
                check(sess, model, ref)  # nothing applied before the chief's update
            sess.run(sync)
            ref.chief()
            check(sess, model, ref)
    # Each step after the first began with a gradient computed at the step before: dropped.
    assert ref.step == 3 and ref.dropped == 2


def test_a_third_gradient_in_before_the_take_joins_the_mean() -> None:
    """``take_grad`` waits for ``replicas_to_aggregate`` gradients and averages all it has."""
    model = build(replicas=2, total=3)
    opt, train, x = model["opt"], model["train"], model["x"]
    grads = np.array([[1.0, 2.0], [3.0, -4.0], [8.0, 8.0]], np.float32)
    with pv.Session() as sess:
        start(sess, model, num_tokens=3)
        for value in grads:
            sess.run(train, {x: value})
        sess.run(opt.get_chief_queue_runner().enqueue_ops[0])
        np.testing.assert_allclose(sess.run(model["w"]), W0 - LEARNING_RATE * grads.mean(0))
        assert sess.run(model["step"]) == 1
        size = opt.get_chief_queue_runner().queue.size()
        assert sess.run(size) == 3  # max(total_num_replicas, replicas_to_aggregate) tokens


def test_init_tokens_are_checked_and_zero_makes_a_no_op() -> None:
    opt = build(replicas=3, total=1)["opt"]
    with pytest.raises(ValueError, match=r"Too few tokens to finish the first step: 1 \(given\)"):
        opt.get_init_tokens_op(num_tokens=1)
    assert build(replicas=2)["opt"].get_init_tokens_op(num_tokens=0).name == "no_init_tokens"


def test_the_hook_needs_the_graph_and_an_initialized_model() -> None:
    opt = pv.train.SyncReplicasOptimizer(pv.train.GradientDescentOptimizer(0.1), 2)
    with pytest.raises(ValueError, match="apply_gradient should be called before using the hook"):
        opt.make_session_run_hook(True).begin()
    model = build(replicas=2)
    hook = model["opt"].make_session_run_hook(is_chief=False)
    hook.begin()
    with (
        pv.Session() as sess,
        pytest.raises(
            RuntimeError,
            match=r"Init operations did not make model ready for SyncReplicasOptimizer "
            r"local_init\. Init op: Assign:0, error: Variables not initialized: w, b, global_step",
        ),
    ):
        hook.after_create_session(sess, None)


def test_a_worker_hook_sets_its_local_step_to_the_global_step() -> None:
    model = build(replicas=2)
    hook = model["opt"].make_session_run_hook(is_chief=False)
    five = pv.assign(model["step"], 5)
    # The chief's session (it initializes the model), with a worker's hook (no queue runner).
    session = pv.train.MonitoredSession(pv.train.ChiefSessionCreator(), hooks=[hook])
    with session as sess:
        raw = sess.raw_session()
        assert raw.run(pv.local_variables()[0]) == 0
        raw.run(five)
        hook.after_create_session(raw, None)
        assert raw.run(pv.local_variables()[0]) == 5


# -- queues and accumulators across sessions ---------------------------------------------------


@pytest.fixture
def two_clients() -> Iterator[tuple[pv.Session, pv.Session]]:
    """Two sessions over one state, as two clients of a cluster task share its resources."""
    state = SessionState()
    first = pv.Session(_state=state)
    second = pv.Session(_state=state)
    yield first, second
    first.close()
    second.close()


def in_thread(
    sess: pv.Session, fetches: object, feed: dict[object, object] | None = None
) -> tuple[threading.Thread, list[object]]:
    """Runs ``fetches`` in a thread; the list gets its value, or the error it raised."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(sess.run(fetches, feed))
        except Exception as error:  # the test inspects it
            out.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_a_dequeue_waits_for_another_clients_enqueue(two_clients) -> None:
    q = pv.FIFOQueue(2, pv.float32, shapes=[()], shared_name="shared")
    dequeued = q.dequeue()
    enqueue = q.enqueue(7.5)
    consumer, producer = two_clients
    thread, out = in_thread(consumer, dequeued)
    thread.join(0.2)
    assert thread.is_alive() and not out  # the queue is empty: it waits
    producer.run(enqueue)
    thread.join(10)
    assert out == [7.5]


def test_closing_a_queue_wakes_a_waiting_dequeue_with_tfs_error(two_clients) -> None:
    q = pv.FIFOQueue(2, pv.int32, shapes=[()], name="q")
    consumer, other = two_clients
    thread, out = in_thread(consumer, q.dequeue_many(2))
    other.run(q.enqueue(1))
    thread.join(0.2)
    assert thread.is_alive()
    other.run(q.close())
    thread.join(10)
    (error,) = out
    assert isinstance(error, pv.errors.OutOfRangeError)
    assert "is closed and has insufficient elements (requested 2, current size 1)" in str(error)


def test_an_enqueue_into_a_full_queue_waits_then_a_cancelling_close_fails_it(two_clients) -> None:
    q = pv.FIFOQueue(1, pv.int32, shapes=[()])
    enqueue = q.enqueue(3)
    producer, other = two_clients
    producer.run(enqueue)
    thread, out = in_thread(producer, enqueue)
    thread.join(0.2)
    assert thread.is_alive()  # full
    assert other.run(q.dequeue()) == 3
    thread.join(10)
    assert out == [None]  # the waiting enqueue went in
    thread, out = in_thread(producer, enqueue)
    thread.join(0.2)
    other.run(q.close(cancel_pending_enqueues=True))
    thread.join(10)
    (error,) = out
    assert isinstance(error, pv.errors.CancelledError)
    assert other.run(q.size()) == 1


def test_a_take_waits_until_enough_gradients_are_applied(two_clients) -> None:
    acc = pv.ConditionalAccumulator(pv.float32, shape=(2,), shared_name="w/grad_accum")
    grad = pv.placeholder(pv.float32, (2,))
    apply = acc.apply_grad(grad, local_step=0)
    chief, worker = two_clients
    thread, out = in_thread(chief, acc.take_grad(2))
    worker.run(apply, {grad: [1.0, 2.0]})
    thread.join(0.2)
    assert thread.is_alive()  # one of two
    worker.run(apply, {grad: [3.0, 6.0]})
    thread.join(10)
    np.testing.assert_array_equal(out[0], [2.0, 4.0])
    # Its step is 1 now: a gradient of step 0 is stale.
    worker.run(apply, {grad: [9.0, 9.0]})
    assert worker.run(acc.num_accumulated()) == 0


def test_a_queue_runner_fills_a_queue_until_its_coordinator_stops_it(two_clients) -> None:
    counter = pv.Variable(0, name="counter")
    q = pv.FIFOQueue(2, pv.int32, shapes=[()])
    runner = pv.train.QueueRunner(q, [q.enqueue(pv.assign_add(counter, 1))])
    pv.train.add_queue_runner(runner)
    assert pv.get_collection(pv.GraphKeys.QUEUE_RUNNERS) == [runner]
    producer, consumer = two_clients
    producer.run(counter.initializer)
    coord = pv.train.Coordinator()
    threads = pv.train.start_queue_runners(producer, coord=coord)
    assert len(threads) == 2  # the enqueue thread and the one that cancels on stop
    dequeue = q.dequeue()
    taken = [int(consumer.run(dequeue)) for _ in range(5)]
    coord.request_stop()
    # The runner may be waiting in an enqueue, holding its session; what is taken makes room,
    # and then the runner stops and its other thread cancels the queue: the rest drains.
    while True:
        try:
            taken.append(int(consumer.run(dequeue)))
        except pv.errors.OutOfRangeError:
            break
    coord.join(threads, stop_grace_period_secs=10)
    assert not any(t.is_alive() for t in threads)
    assert taken == list(range(1, len(taken) + 1)) and len(taken) >= 5
    assert consumer.run(q.is_closed())


def test_a_coordinator_raises_the_error_a_thread_reported() -> None:
    coord = pv.train.Coordinator()

    def fail() -> None:
        with coord.stop_on_exception():
            raise pv.errors.InvalidArgumentError("broken input")

    thread = threading.Thread(target=fail)
    coord.register_thread(thread)
    thread.start()
    with pytest.raises(pv.errors.InvalidArgumentError, match="broken input"):
        coord.join()
    clean = pv.train.Coordinator()
    clean.request_stop(pv.errors.OutOfRangeError("end of input"))
    clean.join()  # the end of input is a clean stop


def test_accumulators_have_no_gpu_kernel_and_queues_put_themselves_on_a_cpu() -> None:
    pv.config.simulate_gpus(1)  # the autouse fixture resets the devices afterwards
    with pv.device("/gpu:0"):
        q = pv.FIFOQueue(2, pv.float32, shapes=[()])
        size = q.size()
        acc = pv.ConditionalAccumulator(pv.float32, shape=())
        count = acc.num_accumulated()
    assert q.queue_ref.op.device == "/device:CPU:0"  # TF's: "CPU" inside "/gpu:0"
    with pv.Session() as sess:
        assert sess.run(size) == 0
        assert sess.placement[size.op.name].endswith("CPU:0")  # with its queue's handle
        with pytest.raises(pv.errors.InvalidArgumentError, match="ResourceConditionalAccumulator"):
            sess.run(count)
    with pv.Session(config=pv.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run(count) == 0
        assert sess.placement[acc.accumulator_ref.op.name].endswith("CPU:0")


def test_replicas_wait_for_the_chief_and_each_step_averages_two_gradients() -> None:
    """Between-graph replication in one process: each replica builds its own optimizer (its own
    local step and train op), whose accumulators and token queue are the same resources by
    shared name. In each round the two replicas run one train op each, and the chief its sync
    op, all at once in their own sessions over one state: the chief waits for both gradients,
    the replicas for its tokens. In the second round the chief sits out: the replicas' gradients
    were computed at step 0 after the update to step 1, so they are dropped."""
    w = pv.Variable(W0, name="w")
    b = pv.Variable(B0, name="b")
    step = pv.train.get_or_create_global_step()
    replicas = []
    for index in range(2):
        x = pv.placeholder(pv.float32, (2,), name=f"x{index}")
        opt = pv.train.SyncReplicasOptimizer(
            pv.train.GradientDescentOptimizer(LEARNING_RATE), replicas_to_aggregate=2
        )
        replicas.append((x, opt.minimize(pv.reduce_sum(w * x) + b, global_step=step)))
        if index == 0:
            chief = opt
    sync = chief.get_chief_queue_runner().enqueue_ops[0]
    state = SessionState()
    sessions = [pv.Session(_state=state) for _ in range(3)]
    chief_session = sessions[2]
    chief_session.run([pv.global_variables_initializer(), pv.local_variables_initializer()])
    chief_session.run(chief.chief_init_op)
    chief_session.run(chief.get_init_tokens_op())
    ref = SyncReference(tokens_per_step=2, init_tokens=2, replicas=2)
    rng = np.random.default_rng(3)
    for chief_runs in (True, False, True, True, True):
        xs = rng.normal(size=(2, 2)).astype(np.float32)
        runs = [(sessions[i], replicas[i][1], {replicas[i][0]: xs[i]}) for i in (0, 1)]
        if chief_runs:
            runs.append((chief_session, sync, None))
        started = [in_thread(sess, fetch, feed) for sess, fetch, feed in runs]
        for thread, _ in started:
            thread.join(30)
        assert not any(thread.is_alive() for thread, _ in started)
        assert not [out for _, out in started if isinstance(out[0], Exception)]
        ref.apply(xs[0], 0)
        ref.apply(xs[1], 1)
        if chief_runs:
            ref.chief()
        ref.take_token(0)
        ref.take_token(1)
        np.testing.assert_allclose(chief_session.run(w), ref.w, rtol=1e-6)
        np.testing.assert_allclose(chief_session.run(b), ref.b, rtol=1e-6)
        assert chief_session.run(step) == ref.step
        assert chief_session.run(pv.local_variables()) == ref.local
    assert ref.step == 4 and ref.dropped == 2
    for session in sessions:
        session.close()


# -- two worker client processes on a cluster --------------------------------------------------

SYNC_CLIENT = """
import json, sys
import numpy as np
import placeviz as pv

spec = pv.train.ClusterSpec(json.loads(sys.argv[1]))
worker, last_step = int(sys.argv[2]), int(sys.argv[3])
setter = pv.train.replica_device_setter(cluster=spec, worker_device=f"/job:worker/task:{worker}")
with pv.device(setter):
    w = pv.Variable(np.zeros(2, np.float32), name="w")
    step = pv.train.get_or_create_global_step()
    loss = pv.reduce_sum(w * np.array([1.0, 2.0], np.float32))
    opt = pv.train.SyncReplicasOptimizer(pv.train.GradientDescentOptimizer(0.5), 2, 2)
    train = opt.minimize(loss, global_step=step)


class Started(pv.train.SessionRunHook):
    def after_create_session(self, session, coord):
        print("started", flush=True)


hooks = [
    opt.make_session_run_hook(is_chief=worker == 0),
    pv.train.StopAtStepHook(last_step=last_step),
    Started(),
]
target = "grpc://" + spec.task_address("worker", worker)
runs = 0
with pv.train.MonitoredTrainingSession(
    target, is_chief=worker == 0, hooks=hooks, stop_grace_period_secs=1
) as sess:
    while not sess.should_stop():
        sess.run(train)
        runs += 1
print(json.dumps({"runs": runs}), flush=True)
"""


def client_line(client: subprocess.Popen, seconds: float) -> str:
    """The client's next line of output; fails when it gives none in time."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(client.stdout.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert lines and lines[0], f"no output from the client (exit status {client.poll()})"
    return lines[0]


def test_two_worker_processes_train_synchronously_on_a_cluster() -> None:
    """Two worker processes, the chief with its queue runner, train until global step 3 as TF's
    synchronous replicas do: every global step applies the mean of two fresh gradients (both
    workers' gradient is (1, 2): w moves by 0.5 * (1, 2) a step, where a sum would move it
    twice as far), so the workers ran at least two train steps per global step (asynchronous
    training would count one). The second worker starts once the chief has initialized the
    model (else it would wait TF's 30 seconds to look again); each ends when the global step
    is reached: the worker's waiting dequeue by the chief's closing of the token queue, the
    chief's queue runner, waiting to take gradients no worker sends any more, by its session's
    close after the grace period (which cancels the step, as TF's Session::Close does)."""
    pytest.importorskip("distributed")
    workers, ps = pv.test.create_local_cluster(2, 1)
    spec = workers[0].cluster_spec
    clients: list[subprocess.Popen] = []
    try:
        for index in (0, 1):
            command = [sys.executable, "-c", SYNC_CLIENT, json.dumps(spec.as_dict()), str(index)]
            clients.append(subprocess.Popen([*command, "3"], stdout=subprocess.PIPE, text=True))
            assert client_line(clients[-1], 30).strip() == "started"
        runs = [json.loads(client_line(client, 60))["runs"] for client in clients]
        with pv.device("/job:ps/task:0"):
            w = pv.Variable(np.zeros(2, np.float32), name="w")
            step = pv.Variable(0, dtype=pv.int64, name="global_step")
        with pv.Session(workers[1].target) as sess:  # the model, as the ps task holds it
            global_step, trained = sess.run([step, w])
    finally:
        for client in clients:
            client.kill()
        for server in workers + ps:
            server.stop()
    assert global_step >= 3 and min(runs) >= 1
    np.testing.assert_allclose(trained, -0.5 * np.array([1.0, 2.0]) * global_step)
    assert sum(runs) >= 2 * global_step


def test_closing_a_session_cancels_its_run_that_waits_on_an_empty_queue() -> None:
    """TF's Session::Close cancels a step blocked in a dequeue: the run raises CancelledError
    and the session closes (instead of waiting for an element that never comes)."""
    with pv.Graph().as_default():
        queue = pv.FIFOQueue(2, pv.float32, shapes=[[]])
        taken = queue.dequeue()
        sess = pv.Session()
    outcome: list[BaseException] = []

    def take() -> None:
        try:
            sess.run(taken)
        except BaseException as error:
            outcome.append(error)

    waiting = threading.Thread(target=take)
    waiting.start()
    while sess.run_in_flight is None and waiting.is_alive():  # the run has begun
        threading.Event().wait(0.001)
    sess.close()
    waiting.join(10)
    assert not waiting.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], pv.errors.CancelledError)
    assert "cancelled" in str(outcome[0]) and taken.op.name in str(outcome[0])
