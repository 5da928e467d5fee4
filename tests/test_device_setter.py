"""``pv.train.replica_device_setter`` and ``pv.train.ClusterSpec``, as TensorFlow 1 defines them.

The requested devices are those TensorFlow sets (the cases of TF's device_setter_test.py and the
placement-semantics reference); running such a graph fails until placeviz runs on a cluster.
"""

from __future__ import annotations

import pytest

import placeviz as pv
from placeviz import train

CLUSTER = train.ClusterSpec(
    {"ps": ["ps0:2222", "ps1:2222"], "worker": ["worker0:2222", "worker1:2222", "worker2:2222"]}
)


# -- replica_device_setter -------------------------------------------------------------------------
def test_variables_round_robin_over_ps_tasks_and_other_ops_on_the_worker() -> None:
    with pv.device(train.replica_device_setter(ps_tasks=2)):
        v1, v2, v3 = pv.Variable(1.0), pv.Variable(2.0), pv.Variable(3.0)
        s = v1 + v2
        with pv.device("/gpu:1"):
            t = v1 + v2
            with pv.device("/task:1"):
                u = v1 + v2
    assert [v.device for v in (v1, v2, v3)] == [
        "/job:ps/task:0",
        "/job:ps/task:1",
        "/job:ps/task:0",
    ]
    # The Assign and read ops are colocated with their variable.
    assert [v.initializer.device for v in (v1, v2, v3)] == [v.device for v in (v1, v2, v3)]
    assert v2.value().device == "/job:ps/task:1"
    assert v1.initial_value.device == "/job:worker"
    assert s.device == "/job:worker"
    assert t.device == "/job:worker/device:GPU:1"
    assert u.device == "/job:worker/task:1/device:GPU:1"


def test_cluster_gives_the_number_of_ps_tasks() -> None:
    for cluster in (CLUSTER, CLUSTER.as_dict()):
        pv.reset_default_graph()
        with pv.device(train.replica_device_setter(cluster=cluster)):
            v, w, x = pv.Variable([1, 2]), pv.Variable([2, 1]), pv.Variable([3, 4])
            a = v + w
        assert [v.device, w.device, x.device] == [
            "/job:ps/task:0",
            "/job:ps/task:1",
            "/job:ps/task:0",
        ]
        assert a.device == "/job:worker"


def test_inner_device_fields_win() -> None:
    with pv.device(train.replica_device_setter(cluster=CLUSTER)):
        with pv.device("/cpu:0"):
            v = pv.Variable([1, 2])
        w = pv.Variable([2, 1])
        with pv.device("/cpu:0"):
            a = v + w
    assert v.device == "/job:ps/task:0/device:CPU:0"
    assert v.initializer.device == "/job:ps/task:0/device:CPU:0"
    assert w.device == "/job:ps/task:1"
    assert a.device == "/job:worker/device:CPU:0"


def test_custom_jobs_and_ps_device_with_a_device_type() -> None:
    cluster = {"sun": ["sun0:2222", "sun1:2222", "sun2:2222"], "moon": ["moon0:2222", "moon1:2222"]}
    with pv.device(
        train.replica_device_setter(
            ps_device="/job:moon/cpu:0", worker_device="/job:sun", cluster=cluster
        )
    ):
        v = pv.Variable([1, 2])
        w = pv.Variable([2, 1])
        a = v + w
    assert v.device == "/job:moon/task:0/device:CPU:0"
    assert w.device == "/job:moon/task:1/device:CPU:0"
    assert a.device == "/job:sun"


def test_task_is_chosen_only_when_the_op_asks_for_no_other_job() -> None:
    cluster = {"sun": ["sun0:2222", "sun1:2222", "sun2:2222"], "moon": ["moon0:2222", "moon1:2222"]}
    setter = train.replica_device_setter(
        ps_device="/job:moon", worker_device="/job:sun", cluster=cluster
    )
    with pv.device(setter):
        v = pv.Variable([1, 2])
        with pv.device("/job:moon"):
            w = pv.Variable([2, 1])
        with pv.device("/job:sun"):
            x = pv.Variable([3, 4])
        y = pv.Variable([5, 6])
        a = v + w
    assert [v.device, w.device, x.device] == ["/job:moon/task:0", "/job:moon/task:1", "/job:sun"]
    assert x.initializer.device == "/job:sun"
    assert y.device == "/job:moon/task:0"  # x took no task: the round-robin did not advance
    assert a.device == "/job:sun"


def test_ps_device_without_a_job_gets_no_task() -> None:
    with pv.device(train.replica_device_setter(ps_tasks=1, ps_device="/cpu:0")):
        v = pv.Variable([1, 2])
        with pv.device("/job:moon"):
            w = pv.Variable([2, 1])
            a = v + w
    assert v.device == "/device:CPU:0"
    assert w.device == "/job:moon/device:CPU:0"
    assert a.device == "/job:moon"


def test_without_merging_a_set_device_is_kept() -> None:
    with pv.device(train.replica_device_setter(cluster=CLUSTER, merge_devices=False)):
        a = pv.Variable([1, 2])
        with pv.device("/job:ps"):
            b = pv.Variable([2, 1])
        with pv.device("/job:ps/task:0"):
            c = pv.Variable([2, 1])
        d = pv.Variable([2, 1])
    assert [a.device, b.device, c.device, d.device] == [
        "/job:ps/task:0",
        "/job:ps",
        "/job:ps/task:0",
        "/job:ps/task:1",
    ]


def test_ps_ops_and_strategy() -> None:
    chosen = []

    def last_task(op: pv.Operation) -> int:
        chosen.append(op.name)
        return 4

    setter = train.replica_device_setter(ps_tasks=5, ps_strategy=last_task, ps_ops=["Const"])
    with pv.device(setter):
        c = pv.constant(1.0, name="c")
        v = pv.Variable(2.0, name="v")
    assert c.device == "/job:ps/task:4"
    assert v.device == "/job:worker"
    assert chosen == ["c", "v/initial_value"]
    with pytest.raises(TypeError, match="ps_strategy must be callable"):
        train.replica_device_setter(ps_tasks=1, ps_strategy=3)


def test_no_ps_tasks_means_no_device_function() -> None:
    assert train.replica_device_setter() is None
    assert train.replica_device_setter(cluster={"worker": ["w:1"]}) is None
    with pv.device(train.replica_device_setter()):
        v = pv.Variable(1.0)
    assert v.device == ""


def test_get_variable_under_the_setter() -> None:
    with pv.device(train.replica_device_setter(ps_tasks=2)), pv.variable_scope("layer"):
        w = pv.get_variable("w", [3, 2])
        b = pv.get_variable("b", [2], initializer=pv.zeros_initializer())
    assert (w.device, b.device) == ("/job:ps/task:0", "/job:ps/task:1")
    # get_variable's initializer ops are built outside any device scope, as in TF.
    assert w.initial_value.device == ""


def test_running_a_replicated_graph_says_placeviz_has_no_cluster() -> None:
    with pv.device(train.replica_device_setter(ps_tasks=2)):
        w = pv.get_variable("w", [2, 2])
        y = pv.matmul(w, w)
    sess = pv.Session()
    with pytest.raises(pv.errors.InvalidArgumentError) as info:
        sess.run(pv.global_variables_initializer())
    message = str(info.value)
    assert "Cannot assign a device for operation 'w'" in message
    assert "Could not satisfy explicit device specification '/job:ps/task:0'" in message
    assert "pv.Session(server.target)" in message
    assert info.value.op is w.op
    with pytest.raises(pv.errors.InvalidArgumentError, match=r"pv.Session\(server.target\)"):
        sess.run(y)


def test_setter_repr_is_what_placement_reasons_quote() -> None:
    setter = train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:1")
    assert repr(setter) == (
        "replica_device_setter(ps_tasks=2, ps_device='/job:ps', worker_device='/job:worker/task:1')"
    )


# -- ClusterSpec ------------------------------------------------------------------------------
def test_cluster_spec_api() -> None:
    spec = train.ClusterSpec({"ps": ["host:2221"], "worker": ["host:2222", "other:2222"]})
    assert spec.jobs == ["ps", "worker"]
    assert (spec.num_tasks("ps"), spec.num_tasks("worker")) == (1, 2)
    assert spec.task_indices("worker") == [0, 1]
    assert spec.task_address("worker", 1) == "other:2222"
    assert spec.job_tasks("worker") == ["host:2222", "other:2222"]
    assert spec.as_dict() == {"ps": ["host:2221"], "worker": ["host:2222", "other:2222"]}
    assert repr(spec) == "ClusterSpec({'ps': ['host:2221'], 'worker': ['host:2222', 'other:2222']})"
    assert spec and not train.ClusterSpec({})


def test_cluster_spec_sparse_jobs() -> None:
    spec = train.ClusterSpec({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": {"0": "ps0:2222"}})
    assert spec.num_tasks("worker") == 2
    assert spec.task_indices("worker") == [1, 3]
    assert spec.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    assert spec.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}
    assert spec.task_address("ps", 0) == "ps0:2222"


def test_cluster_spec_equality_and_copy() -> None:
    spec = train.ClusterSpec({"ps": ["a:1"], "worker": ["b:1"]})
    copy = train.ClusterSpec(spec)
    assert copy == spec and copy is not spec
    assert train.ClusterSpec({"ps": {0: "a:1"}, "worker": ("b:1",)}) == spec
    assert spec != train.ClusterSpec({"ps": ["a:2"], "worker": ["b:1"]})
    with pytest.raises(TypeError):
        hash(spec)


def test_cluster_spec_errors() -> None:
    spec = train.ClusterSpec({"ps": ["a:1"]})
    with pytest.raises(ValueError, match="No such job in cluster: 'worker'"):
        spec.num_tasks("worker")
    with pytest.raises(ValueError, match="No task with index 3 in job 'ps'"):
        spec.task_address("ps", 3)
    with pytest.raises(TypeError, match="must be a list or a dictionary from integers to strings"):
        train.ClusterSpec({"ps": "a:1"})
    with pytest.raises(TypeError, match="Task address 5 must be bytes or unicode"):
        train.ClusterSpec({"ps": [5]})
    with pytest.raises(TypeError, match="Job name 1 must be bytes or unicode"):
        train.ClusterSpec({1: ["a:1"]})
    with pytest.raises(TypeError, match="`cluster` must be a dictionary"):
        train.ClusterSpec(["a:1"])


def test_as_cluster_def_mirrors_tensorflows_cluster_def() -> None:
    # TF 2.21: jobs sorted by name, each with task index -> address; ClusterSpec takes it back.
    spec = train.ClusterSpec({"worker": {2: "w2:2222", 0: "w0:2222"}, "ps": ["ps0:2222"]})
    cluster_def = spec.as_cluster_def()
    assert [(job.name, dict(job.tasks)) for job in cluster_def.job] == [
        ("ps", {0: "ps0:2222"}),
        ("worker", {0: "w0:2222", 2: "w2:2222"}),
    ]
    assert list(cluster_def.job[1].tasks) == [0, 2]
    again = train.ClusterSpec(cluster_def)
    assert again == spec
    assert again.as_dict() == {"ps": ["ps0:2222"], "worker": {0: "w0:2222", 2: "w2:2222"}}
