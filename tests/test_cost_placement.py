"""ConfigProto(placer="cost"): pins and colocation hold, everything else goes where a simulation
of the graph finishes it first, and every such op says why against the devices it did not take."""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

import placeviz as pv
from placeviz.contract import ReasonKind
from placeviz.events.document import validate


@pytest.fixture
def gpus():
    pv.config.simulate_gpus(2)


def towers(batch: int = 512, width: int = 1024, depth: int = 4, pinned: str | None = None):
    """Two independent towers of ``depth`` layers, their variables made without a device scope
    (or all under ``pinned``), summed at the end."""
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [batch, width], name="x")
        outs = []
        for i in range(2):
            with pv.device(pinned) if pinned else contextlib.nullcontext():
                w = pv.Variable(pv.ones([width, width]), name=f"w{i}")
                h = x
                for layer in range(depth):
                    h = pv.nn.relu(pv.matmul(h, w, name=f"layer{i}_{layer}"))
                outs.append(pv.matmul(h, w, name=f"out{i}"))
        y = pv.add_n(outs, name="sum")
        init = pv.global_variables_initializer()
    return graph, x, y, init


def run(graph, x, y, init, placer: str):
    session = pv.Session(graph=graph, config=pv.ConfigProto(placer=placer))
    session.run(init)
    metadata = pv.RunMetadata()
    value = np.ones(x.shape.as_list(), np.float32)
    session.run(y, {x: value}, run_metadata=metadata)
    return session, metadata.trace


def short(session, name: str) -> str:
    return session.placement[name].rsplit("device:", 1)[-1]


def test_placer_must_be_simple_or_cost():
    with pytest.raises(ValueError, match="placer must be one of 'simple', 'cost'"):
        pv.ConfigProto(placer="fastest")
    with pytest.raises(TypeError, match="placer must be a str"):
        pv.ConfigProto(placer=1)


def test_cost_placer_splits_towers_and_beats_the_simple_placer(gpus):
    graph, x, y, init = towers()
    simple, simple_trace = run(graph, x, y, init, "simple")
    cost, cost_trace = run(graph, x, y, init, "cost")
    assert {short(simple, f"out{i}") for i in range(2)} == {"GPU:0"}
    assert {short(cost, "out0"), short(cost, "out1")} == {"GPU:0", "GPU:1"}
    # Both steps are modeled on simulated GPUs: the split is faster, by more than the
    # transfers it adds (the input to one GPU, one tower's output back).
    assert cost_trace.step_s < 0.95 * simple_trace.step_s
    for name in ("layer0_0", "out1", "sum"):
        reason = cost.placement.explain(name)
        assert reason.kind is ReasonKind.COST
        assert reason.text.startswith("cost model: ")
    validate(cost_trace.to_document())


def test_small_towers_stay_on_one_device_where_transfers_cost_more_than_they_save(gpus):
    graph, x, y, init = towers(batch=8, width=64, depth=1)
    cost, _ = run(graph, x, y, init, "cost")
    # Microseconds of work per op: a GPU's launch and a copy cost more than the op itself.
    devices = {short(cost, n) for n in ("layer0_0", "out0", "layer1_0", "out1", "sum")}
    assert len(devices) == 1, devices


def test_explanations_name_devices_of_the_session_and_their_finish_times(gpus):
    graph, x, y, init = towers()
    session, _ = run(graph, x, y, init, "cost")
    names = {"CPU:0", "GPU:0", "GPU:1"}
    for op in graph.get_operations():
        reason = session.placement.explain(op.name)
        if reason.kind is not ReasonKind.COST or "initializes variables" in reason.text:
            continue
        named = set(re.findall(r"\b(?:CPU|GPU):\d\b", reason.text))
        assert short(session, op.name) in named, reason.text
        assert named <= names, reason.text
        assert len(named) >= 2, f"{op.name}: no alternative named in {reason.text!r}"
        times = re.findall(r"\b[\d.]+ (?:µs|ms|s)\b", reason.text)
        assert len(times) >= 2, reason.text


def test_pinned_ops_stay_pinned_and_colocated_ops_stay_together(gpus):
    graph, x, y, init = towers(pinned="/gpu:1")
    session, _ = run(graph, x, y, init, "cost")
    for i in range(2):
        for name in (f"w{i}", f"w{i}/read", f"w{i}/Assign", f"layer{i}_0", f"out{i}"):
            assert short(session, name) == "GPU:1"
            assert session.placement.explain(name).kind is not ReasonKind.COST
    graph, x, y, init = towers()
    session, _ = run(graph, x, y, init, "cost")
    for i in range(2):
        devices = {short(session, n) for n in (f"w{i}", f"w{i}/read", f"w{i}/Assign")}
        assert len(devices) == 1


def test_a_full_gpu_is_left_for_one_with_room():
    # Each GPU holds 56 MiB: one tower's 16 MiB of weights (48 MiB while they are initialized:
    # the initial value, and the run counts the Assign's output too) fits, both towers' do not
    # (the placer counts a variable twice: 64 MiB).
    pv.config.simulate_gpus(2, memory_limit_mb=56)
    graph, x, y, init = towers(width=2048, depth=1)
    session, _ = run(graph, x, y, init, "cost")
    assert {short(session, "w0"), short(session, "w1")} != {"GPU:0"}
    held: dict[str, int] = {}
    for op in graph.get_operations():
        if op.type == "VariableV2":
            device = short(session, op.name)
            held[device] = held.get(device, 0) + op.outputs[0].shape.num_elements() * 4
    assert all(size <= 56 << 20 for size in held.values()), held
    texts = [session.placement.explain(op.name).text for op in graph.get_operations()]
    pattern = r"(GPU:\d) full: ([\d.]+) MiB of 56 MiB held, ([\d.]+) MiB more"
    full = [m for text in texts for m in re.finditer(pattern, text)]
    assert full, "no explanation says a device was full, with its bytes"
    for match in full:
        assert float(match.group(2)) + float(match.group(3)) > 56, match.group(0)


def test_pinned_variables_that_overflow_leave_the_rest_to_tensorflows_rule(gpus):
    # The pinned weights alone exceed GPU:0 (the run will say so); the placer says why it fell
    # back rather than failing the unpinned ops.
    pv.config.simulate_gpus(2, memory_limit_mb=24)
    graph, _, _, init = towers(width=2048, depth=1, pinned="/gpu:0")
    session = pv.Session(graph=graph, config=pv.ConfigProto(placer="cost"))
    with pytest.raises(pv.errors.ResourceExhaustedError):
        session.run(init)
    text = session.placement.explain("sum").text
    assert text.startswith("the cost model found no placement"), text
    assert "fits on no device" in text or "fit on no device" in text, text


def test_shapes_unknown_before_the_run_take_the_fed_size(gpus):
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [None, 1024], name="x")
        w = pv.constant(np.ones((1024, 1024), np.float32), name="w")
        y = pv.matmul(x, w, name="product")
    session = pv.Session(graph=graph, config=pv.ConfigProto(placer="cost"))
    session.run(y, {x: np.ones((4096, 1024), np.float32)})
    text = session.placement.explain("product").text
    # 4096 x 1024 x 1024 x 2 FLOPs: tens of µs on an H100, a whole 86 ms on the host's
    # assumed 100 GFLOP/s.
    assert re.search(r"CPU:0 at (8\d\.?\d*) ms", text), text


def test_a_step_whose_tensors_fit_nowhere_falls_back_and_says_so():
    # 24 MiB GPUs: the towers' 8 MiB activations outgrow a GPU by the placer's static liveness,
    # and no schedule it tries fits them; it says so and leaves them to TensorFlow's rule,
    # whose run then names the op that does not fit.
    pv.config.simulate_gpus(2, memory_limit_mb=24)
    graph, x, y, init = towers(batch=2048, width=1024, depth=1)
    session = pv.Session(graph=graph, config=pv.ConfigProto(placer="cost"))
    session.run(init)
    text = session.placement.explain("out1").text
    assert text.startswith("the cost model found no placement (the step's live tensors would ")
    with pytest.raises(pv.errors.ResourceExhaustedError, match="OOM when allocating"):
        session.run(y, {x: np.ones((2048, 1024), np.float32)})
    session.run(init)  # the session is still usable
