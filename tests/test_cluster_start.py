"""Starting a cluster's processes (issue 28): tasks forked by a launcher, each a process of its
own and a child of the process that made its Server; a task of the cluster spec that does not
run; tasks on two loopback addresses, as on two hosts. Real processes; the start's speed is
benchmarks/bench_cluster_start.py's."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from processes import listening

import placeviz as pv
from placeviz.cluster.security import PLAIN_SCHEME
from placeviz.cluster.server import start_servers

pytest.importorskip("distributed")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def test_every_task_is_a_process_of_its_own_and_a_child_of_this_one() -> None:
    from placeviz.cluster.coordinator import cluster_key
    from placeviz.cluster.rendezvous import rendezvous_dir

    workers, ps = pv.test.create_local_cluster(2, 2)
    servers = workers + ps
    try:
        pids = [server.pid for server in servers]
        assert len(set(pids)) == 4 and os.getpid() not in pids
        for pid in pids:
            assert parent_of(pid) == os.getpid()  # as a subprocess would be, not the launcher's
            assert os.getsid(pid) == pid  # its own session: a Ctrl-C here is not the cluster's
        # The scheduler too, a process of its own.
        spec = workers[0].cluster_spec
        record = json.loads((rendezvous_dir() / f"{cluster_key(spec)}.json").read_text())
        assert record["pid"] not in pids and parent_of(record["pid"]) == os.getpid()
        # Each task listens where its Server says, and runs ops in its own process.
        for server in servers:
            port = int(server.target.rsplit(":", 1)[1])
            assert ("127.0.0.1", port) in listening(server.pid)
        with pv.device("/job:ps/task:1"):
            v = pv.Variable(3.0)
        with pv.device("/job:worker/task:1"):
            doubled = v * 2
        with pv.Session(workers[0].target) as sess:
            sess.run(v.initializer)
            assert sess.run(doubled) == 6.0
            pid_of = {d["name"]: d["pid"] for d in sess.trace().devices}
            assert pid_of[sess.placement[v.op.name]] == ps[1].pid
            assert pid_of[sess.placement[doubled.op.name]] == workers[1].pid
        # One task may die alone.
        ps[1].stop()
        assert not ps[1].running and all(s.running for s in servers[:3])
    finally:
        for server in servers:
            server.stop()


# A process that makes a Server, says its task's pid, and waits to be killed.
MAKER = """
import json, sys
import placeviz as pv
server = pv.train.Server({"worker": ["localhost:%d"]}, "worker", 0)
print(server.pid, flush=True)
sys.stdin.read()
"""


def test_a_task_ends_when_the_process_that_made_its_server_ends() -> None:
    port = free_port("127.0.0.1")
    maker = subprocess.Popen(
        [sys.executable, "-c", MAKER % port],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        task = int(maker.stdout.readline())  # type: ignore[union-attr]
        pidfd = os.pidfd_open(task)
    finally:
        maker.kill()  # no atexit, no stop(): the task sees its maker's end by itself
        maker.wait()
    try:
        ended, _, _ = select.select([pidfd], [], [], 30)  # a bound for a hang, not a timing
        assert ended, f"task {task} outlived the process that made its Server"
    finally:
        os.close(pidfd)
    from placeviz.cluster.coordinator import release

    release(pv.train.ClusterSpec({"worker": [f"localhost:{port}"]}))


def test_a_run_that_needs_a_task_that_does_not_run_fails_as_unavailable() -> None:
    """The cluster spec names ps task 1, which nobody started: an op pinned there fails the run
    that needs it with UnavailableError naming the task and its address; other runs work."""
    ports = [free_port("127.0.0.1") for _ in range(3)]
    spec = {"worker": [f"localhost:{ports[0]}"], "ps": [f"localhost:{p}" for p in ports[1:]]}
    worker = pv.train.Server(spec, "worker", 0, start=False)
    ps0 = pv.train.Server(spec, "ps", 0, start=False)
    start_servers([worker, ps0])
    try:
        with pv.device("/job:ps/task:0"):
            here = pv.Variable(2.0, name="here")
        with pv.device("/job:ps/task:1"):
            gone = pv.Variable(5.0, name="gone")
        with pv.device("/job:worker/task:0"):
            uses_gone = gone * 2
            uses_here = here * 3
        with pv.Session(worker.target) as sess:
            sess.run(here.initializer)
            with pytest.raises(pv.errors.UnavailableError) as info:
                sess.run(uses_gone)
            assert "/job:ps/task:1" in str(info.value)
            assert f"localhost:{ports[2]}" in str(info.value)
            assert sess.run(uses_here) == 6.0  # runs that do not need it still work
            with pytest.raises(pv.errors.UnavailableError, match="/job:ps/task:1"):
                sess.run(gone.initializer)
            assert sess.run(here) == 2.0
    finally:
        worker.stop()
        ps0.stop()


@pytest.mark.parametrize("tls", [False, True], ids=["tcp", "tls"])
def test_tasks_on_two_loopback_addresses_run_a_step_together(
    tls: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ps on 127.0.0.2, the worker on localhost (127.0.0.1), as on two hosts."""
    if tls:
        monkeypatch.setenv("PLACEVIZ_CLUSTER_TLS", "1")
    scheme = "tls" if tls else PLAIN_SCHEME
    ps_port, worker_port = free_port("127.0.0.2"), free_port("127.0.0.1")
    spec = {"ps": [f"127.0.0.2:{ps_port}"], "worker": [f"localhost:{worker_port}"]}
    ps = pv.train.Server(spec, "ps", 0, start=False)
    worker = pv.train.Server(spec, "worker", 0, start=False)
    start_servers([ps, worker])
    try:
        assert ps.target == f"grpc://127.0.0.2:{ps_port}"
        assert set(listening(ps.pid)) >= {("127.0.0.2", ps_port)}
        assert {address for address, _ in listening(ps.pid)} == {"127.0.0.2"}
        assert set(listening(worker.pid)) >= {("127.0.0.1", worker_port)}
        assert {address for address, _ in listening(worker.pid)} == {"127.0.0.1"}
        with pv.device("/job:ps/task:0"):
            w = pv.Variable(1.0, name="w")
        with pv.device("/job:worker/task:0"):
            loss = pv.square(w - 3.0)
            step = pv.train.GradientDescentOptimizer(0.25).minimize(loss)
        with pv.Session(worker.target) as sess:
            sess.run(w.initializer)
            sess.run(step)  # w -= 0.25 * 2 * (w - 3)
            assert sess.run(w) == 2.0
            assert sess.placement[w.op.name] == "/job:ps/replica:0/task:0/device:CPU:0"
            addresses = {t.name: t.address for t in sess._remote.tasks.values()}
        assert addresses == {
            "/job:ps/task:0": f"{scheme}://127.0.0.2:{ps_port}",
            "/job:worker/task:0": f"{scheme}://127.0.0.1:{worker_port}",
        }
    finally:
        ps.stop()
        worker.stop()


def test_placeviz_server_with_parent_ends_when_that_process_ends() -> None:
    """``placeviz server --parent PID``: the task watches that process and ends after it."""
    port = free_port("127.0.0.1")
    spec = json.dumps({"worker": [f"localhost:{port}"]})
    parent = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    command = [sys.executable, "-m", "placeviz", "server", "--cluster", spec, "--job", "worker"]
    task = subprocess.Popen(
        [*command, "--parent", str(parent.pid)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert "listening on" in task.stdout.readline()  # type: ignore[union-attr]
        parent.kill()
        parent.wait()
        assert task.wait(timeout=30) == 0  # a bound for a hang, not a timing
    finally:
        task.kill()
        parent.kill()
    from placeviz.cluster.coordinator import release

    release(pv.train.ClusterSpec(json.loads(spec)))
