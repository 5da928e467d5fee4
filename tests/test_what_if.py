"""Trace.what_if and pv.compare: a prediction repeats the run when nothing moves, obeys the same
rules as a run when something does (checked here from the events alone), and a comparison says
exactly which ops moved and what it changed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import placeviz as pv
from placeviz.contract import EventKind, ReasonKind, TimingSource
from placeviz.events.compare import COMPARE_MIME_TYPE
from placeviz.events.document import validate

OP, TRANSFER = int(EventKind.OP), int(EventKind.TRANSFER)


def training_step(gpus: int = 2):
    """Two towers of a small MLP on two GPUs, gradients averaged on the CPU, one Adam step."""
    pv.config.simulate_gpus(gpus)
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [256, 512], name="x")
        with pv.device("/cpu:0"):
            w1 = pv.Variable(pv.random_normal([512, 512], stddev=0.05), name="w1")
            w2 = pv.Variable(pv.random_normal([512, 10], stddev=0.05), name="w2")
        losses = []
        for i, half in enumerate(pv.split(x, 2)):
            with pv.device(f"/gpu:{i}"), pv.name_scope(f"tower{i}"):
                h = pv.nn.relu(pv.matmul(half, w1))
                losses.append(pv.reduce_mean(pv.square(pv.matmul(h, w2))))
        loss = pv.add_n(losses, name="loss")
        train = pv.train.AdamOptimizer(1e-3).minimize(loss)
        init = pv.global_variables_initializer()
    session = pv.Session(graph=graph)
    session.run(init)
    metadata = pv.RunMetadata()
    session.run(train, {x: np.ones((256, 512), np.float32)}, run_metadata=metadata)
    return graph, session, metadata.trace


def steps(trace: pv.Trace) -> list[tuple[int, int, int, int, int]]:
    ev = trace.events
    run = trace.runs[-1]["id"]
    keep = np.isin(ev["kind"], [OP, TRANSFER]) & (ev["run"] == run)
    rows = zip(*(ev[c][keep].tolist() for c in ("kind", "node", "device", "t0", "t1")))
    return sorted(rows)


def test_no_move_repeats_the_runs_modeled_times():
    _, _, trace = training_step()
    same = trace.what_if()
    assert steps(same) == steps(trace)
    assert same.step_s == pytest.approx(trace.step_s)
    assert same.prediction == "what if nothing changed"
    assert set(same.events["source"].tolist()) == {int(TimingSource.MODELED)}


def check_prediction(trace: pv.Trace, graph: pv.Graph) -> None:
    """An independent checker: each device's compute and copy lanes run one step at a time, an
    op starts after each input is on its device (made there, or copied there after it was made),
    a control input has finished first."""
    ops = {op.id: op for op in graph.get_operations()}
    ev = trace.events
    rows = np.flatnonzero(np.isin(ev["kind"], [OP, TRANSFER]))
    ran: dict[int, tuple[int, int, int]] = {}  # node -> (device, t0, t1)
    arrived: dict[tuple[int, int], int] = {}  # (node, device) -> when its output is there
    lanes: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for r in rows:
        kind, node, device = int(ev["kind"][r]), int(ev["node"][r]), int(ev["device"][r])
        t0, t1 = int(ev["t0"][r]), int(ev["t1"][r])
        assert t1 >= t0
        lanes.setdefault((device, kind), []).append((t0, t1))
        if kind == OP:
            ran[node] = (device, t0, t1)
            arrived[(node, device)] = min(arrived.get((node, device), t1), t1)
        else:
            arrived[(node, device)] = min(arrived.get((node, device), t1), t1)
    placed = {n["id"]: n["device"] for n in trace.nodes}
    for r in rows:
        if int(ev["kind"][r]) == TRANSFER:
            node, peer = int(ev["node"][r]), int(ev["peer"][r])
            if node not in ran:  # a fed value: there from the start, on its op's device
                assert placed[node] == peer
                continue
            assert ran[node][0] == peer
            assert int(ev["t0"][r]) >= ran[node][2], f"copy of {ops[node].name} before it ended"
    for node, (device, t0, _) in ran.items():
        op = ops[node]
        for tensor in op.inputs:
            if tensor.op.id in ran or placed.get(tensor.op.id) not in (None, device):
                there = arrived.get((tensor.op.id, device))
                assert there is not None, f"{op.name}'s input {tensor.op.name} never reached it"
                assert there <= t0, f"{op.name} started before {tensor.op.name} arrived"
        for control in op.control_inputs:
            if control.id in ran:
                assert ran[control.id][2] <= t0
    for spans in lanes.values():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert start >= end, "two steps at once on one lane"


def test_predictions_with_moves_obey_the_rules_of_a_run():
    graph, _, trace = training_step()
    ran = set(trace.events["node"][trace.events["kind"] == OP].tolist())
    movable = sorted(
        op.name
        for op in graph.get_operations()
        if op.id in ran and op.type in ("MatMul", "Relu", "Square", "Mean", "AddN")
    )

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        names=st.lists(st.sampled_from(movable), max_size=6, unique=True),
        where=st.lists(st.sampled_from(["/gpu:0", "/gpu:1", "/cpu:0"]), min_size=6),
    )
    def check(names: list[str], where: list[str]) -> None:
        moves = dict(zip(names, where))
        try:
            predicted = trace.what_if(moves)
        except ValueError as error:  # two moves split a colocation group: refused, not done
            assert "a colocation group runs on one device" in str(error)
            return
        check_prediction(predicted, graph)
        devices = {d["id"]: d["name"] for d in predicted.devices}
        placed = {n["name"]: n for n in predicted.nodes}
        for name, spec in moves.items():
            assert devices[placed[name]["device"]].lower().endswith(spec[1:].replace("/", ":"))
            assert placed[name]["reason"]["kind"] == str(ReasonKind.MOVED)
        validate(predicted.to_document())

    check()


def test_moving_a_variable_moves_its_colocation_group_and_the_step_changes():
    graph, _, trace = training_step()
    predicted = trace.what_if({"w1": "/gpu:1"})
    check_prediction(predicted, graph)
    devices = {d["id"]: d["name"] for d in predicted.devices}
    by_name = {n["name"]: devices.get(n["device"]) for n in predicted.nodes}
    for name in ("w1", "w1/read"):
        assert by_name[name].endswith("GPU:1")
    assert predicted.step_s != pytest.approx(trace.step_s)
    assert predicted.to_document()["prediction"] == "what if w1 on /gpu:1"


def test_a_question_about_many_ops_names_the_scope_they_share():
    graph, _, trace = training_step()
    tower = [op.name for op in graph.get_operations() if op.name.startswith("tower1/")]
    predicted = trace.what_if({name: "/gpu:0" for name in tower} | {"w1": "/gpu:1"})
    question = f"what if {len(tower)} ops of tower1/ on /gpu:0, w1 on /gpu:1"
    assert predicted.to_document()["prediction"] == question


def test_fewer_gpus_fold_onto_gpu0_and_more_gpus_take_moves():
    graph, _, trace = training_step()
    one = trace.what_if(devices=1)
    check_prediction(one, graph)
    assert [d["name"].rsplit(":", 2)[-2:] for d in one.devices] == [["CPU", "0"], ["GPU", "0"]]
    tower1 = next(n for n in one.nodes if n["name"] == "tower1/MatMul")
    assert one.devices[tower1["device"]]["name"].endswith("GPU:0")
    four = trace.what_if({"tower1/MatMul_1": "/gpu:3"}, devices={"GPU": 4})
    check_prediction(four, graph)
    assert len(four.devices) == 5
    validate(four.to_document())


def test_what_if_errors_name_the_op_and_the_devices():
    _, _, trace = training_step()
    with pytest.raises(ValueError, match=r"'w1/read'.* colocated with 'w1', which 'w1' takes"):
        trace.what_if({"w1": "/gpu:0", "w1/read": "/gpu:1"})
    with pytest.raises(ValueError, match="takes a number of GPUs"):
        trace.what_if(devices={"TPU": 2})
    with pytest.raises(KeyError, match="no op named 'nope'"):
        trace.what_if({"nope": "/gpu:0"})
    with pytest.raises(ValueError, match=r"no device matches '/gpu:7' for 'tower0/MatMul'.*GPU:1"):
        trace.what_if({"tower0/MatMul": "/gpu:7"})
    bare = pv.Trace(trace.devices, trace.nodes, trace.edges, trace.runs, trace.events)
    with pytest.raises(ValueError, match="needs a trace from a session"):
        bare.what_if()


def test_compare_lists_exactly_the_moved_ops_and_the_changes():
    _, _, trace = training_step()
    predicted = trace.what_if({"tower1/MatMul": "/gpu:0"})
    comparison = pv.compare(trace, predicted, labels=("run", "what if"))
    before = {n["name"]: n["device"] for n in trace.nodes}
    after = {n["name"]: n["device"] for n in predicted.nodes}
    assert {m.name for m in comparison.moved} == {n for n in before if before[n] != after[n]}
    assert comparison.step_s == (trace.step_s, predicted.step_s)
    document = comparison.to_document()
    for side in document["documents"]:
        validate(side)
    assert document["labels"] == ["run", "what if"]
    gpu1 = next(d for d in document["devices"] if d["device"].endswith("GPU:1"))
    assert gpu1["ops"][1] < gpu1["ops"][0]
    bundle = comparison._repr_mimebundle_()
    assert set(bundle) == {COMPARE_MIME_TYPE, "text/plain"}
    assert "tower1/MatMul: GPU:1 → GPU:0" in bundle["text/plain"]
    other = pv.Graph()
    with other.as_default():
        pv.constant(1.0, name="lonely")
        session = pv.Session(graph=other)
        session.run("lonely:0")
    with pytest.raises(ValueError, match="same graph"):
        pv.compare(trace, session.trace())


def test_a_fed_value_is_copied_where_it_is_read():
    pv.config.simulate_gpus(2)
    graph = pv.Graph()
    with graph.as_default():
        with pv.device("/gpu:0"):
            x = pv.placeholder(pv.float32, [1024, 1024], name="x")
        with pv.device("/gpu:1"):
            y = pv.nn.relu(x, name="y")
    session = pv.Session(graph=graph)
    metadata = pv.RunMetadata()
    session.run(y, {x: np.ones((1024, 1024), np.float32)}, run_metadata=metadata)
    trace = metadata.trace
    same = trace.what_if()
    assert steps(same) == steps(trace)  # the copy of x to GPU:1 included
    check_prediction(same, graph)
    closer = trace.what_if({"y": "/gpu:0"})
    assert closer.step_s < trace.step_s / 2  # no copy any more


def test_fewer_gpus_relocate_every_op_including_those_that_did_not_run():
    _, session, _ = training_step()
    full = session.trace(runs=None)  # the initializer run's ops are in its nodes too
    one = full.what_if(devices=1)
    validate(one.to_document())
    pv.compare(full, one)  # every node names a device the prediction has


def test_what_if_refuses_a_failed_run_and_a_move_without_kernels():
    pv.config.simulate_gpus(1)
    graph = pv.Graph()
    with graph.as_default():
        counter = pv.Variable(3, name="counter")  # int32: no GPU kernel for its variable
        doubled = pv.add(counter, counter, name="doubled")
    session = pv.Session(graph=graph)
    with pytest.raises(pv.errors.FailedPreconditionError):
        session.run(doubled)
    with pytest.raises(ValueError, match="the trace's last run failed"):
        session.trace().what_if()
    session.run(counter.initializer)
    session.run(doubled)
    with pytest.raises(ValueError, match=r"'counter' \(VariableV2.*has no GPU kernel"):
        session.trace().what_if({"counter/read": "/gpu:0"})
