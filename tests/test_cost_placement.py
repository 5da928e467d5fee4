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
from placeviz.examples.transformer import build_transformer_block
from placeviz.placement.cost_placer import StepFinder


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


def block_variables(width: int = 512, heads: int = 8) -> dict:
    """A transformer block's weights as variables, made with nothing that reads them yet."""
    weights = {}
    for h in range(heads):
        with pv.name_scope(f"head{h}"):
            for name in ("wq", "wk", "wv"):
                weights[h, name] = pv.Variable(
                    pv.random_normal([width, width // heads], stddev=0.05), name=name
                )
    weights["wo"] = pv.Variable(pv.random_normal([width, width], stddev=0.05), name="wo")
    weights["w1"] = pv.Variable(pv.random_normal([width, 4 * width], stddev=0.05), name="w1")
    weights["w2"] = pv.Variable(pv.random_normal([4 * width, width], stddev=0.05), name="w2")
    return weights


def block_training_step(weights: dict, tokens: int = 1024, width: int = 512, heads: int = 8):
    """The block's forward pass on a fed batch, its loss and a gradient descent step."""
    x = pv.placeholder(pv.float32, [tokens, width], name="tokens")
    size = width // heads
    outputs = []
    for h in range(heads):
        with pv.name_scope(f"head{h}"):
            q, k, v = (pv.matmul(x, weights[h, n]) for n in ("wq", "wk", "wv"))
            scores = pv.matmul(q, k, transpose_b=True) * (1.0 / size**0.5)
            outputs.append(pv.matmul(pv.nn.softmax(scores), v))
    attended = pv.matmul(pv.concat(outputs, axis=1), weights["wo"]) + x
    hidden = pv.nn.relu(pv.matmul(attended, weights["w1"]))
    out = pv.matmul(hidden, weights["w2"]) + attended
    loss = pv.reduce_mean(pv.square(out), name="loss")
    train = pv.train.GradientDescentOptimizer(0.01).minimize(loss, name="train")
    return x, loss, train


def block_steps(placer: str, init_first: bool, steps: int = 2) -> tuple[pv.Session, list[float]]:
    """Each traced step's modeled time (dry runs: the CPU's ops modeled too, so the figures
    are the same on any machine), the variables initialized before or after the step is made."""
    graph = pv.Graph()
    with graph.as_default():
        weights = block_variables()
        session = pv.Session(graph=graph, config=pv.ConfigProto(placer=placer))
        if init_first:
            session.run(pv.global_variables_initializer())
            x, loss, train = block_training_step(weights)
        else:
            x, loss, train = block_training_step(weights)
            session.run(pv.global_variables_initializer())
    feed = {x: np.ones(x.shape.as_list(), np.float32)}
    times = []
    for _ in range(steps):
        metadata = pv.RunMetadata()
        options = pv.RunOptions(dry_run=True)
        session.run([train, loss], feed, options=options, run_metadata=metadata)
        times.append(metadata.trace.step_s)
    return session, times


@pytest.mark.parametrize("init_first", [True, False], ids=["init-then-step", "step-then-init"])
def test_a_transformers_first_step_is_not_slower_than_the_simple_placers(gpus, init_first):
    _, simple = block_steps("simple", init_first)
    session, cost = block_steps("cost", init_first)
    assert cost[0] == cost[1]  # the first traced step is a step like the others
    assert cost[0] < 0.9 * simple[0], (cost, simple)
    text = session.placement.explain("head0/wv").text
    if init_first:
        # Placed at the initializer's run, with no step in view: TensorFlow's rule, saying so.
        assert short(session, "head0/wv") == "GPU:0", text
        assert text.startswith("the cost model has no step to plan for"), text
        # The step made after is planned around them, and says for which step.
        text = session.placement.explain("loss").text
        assert text.endswith("planned for the step this run fetches (train, loss)"), text
    else:
        # Placed at the initializer's run with the step in view: planned for it.
        assert re.search(
            r"planned for the step that runs train\b.* \(what nothing consumes\)$", text
        ), text


def test_an_op_that_only_reads_variables_is_no_step(gpus):
    # initialized_value()'s cond, left dangling (as ExponentialMovingAverage leaves it), and a
    # read nobody uses compute from no placeholder or constant of their own: the step is the
    # train op, and they are not in it.
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [256, 256], name="x")
        w = pv.Variable(pv.ones([256, 256]), name="w")
        start = w.initialized_value()
        pv.square(w, name="spare")
        loss = pv.reduce_sum(pv.matmul(x, w), name="loss")
        train = pv.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
        init = pv.global_variables_initializer()
    step = StepFinder().plan(graph.get_operations(), [init])
    names = {op.name for op in step.targets}
    assert "train" in names
    assert start.op.name not in names and "spare" not in names
    by_name = {op.name: op for op in graph.get_operations()}
    assert by_name[start.op.name].id not in step.ops and by_name["spare"].id not in step.ops
    assert by_name["w/Assign"].id in step.initializing
    session = pv.Session(graph=graph, config=pv.ConfigProto(placer="cost"))
    session.run(init)
    text = session.placement.explain("spare").text
    assert "the step planned for does not run it" in text, text
    session.run(train, {x: np.ones((256, 256), np.float32)})


def test_explain_names_the_step_the_run_fetches(gpus):
    graph = pv.Graph()
    with graph.as_default():  # constants for weights: no initializer to run first
        x, out = build_transformer_block(tokens=256, width=128, heads=4)
    session = pv.Session(graph=graph, config=pv.ConfigProto(placer="cost"))
    session.run(out, {x: np.ones((256, 128), np.float32)})  # placed at the step's run
    text = session.placement.explain("head1/attention").text
    assert text.endswith(f"planned for the step this run fetches ({out.op.name})"), text
    graph, _, _, init = towers()
    session = pv.Session(graph=graph, config=pv.ConfigProto(placer="cost"))
    session.run(init)  # placed at the initializer's run: the step is what nothing consumes
    text = session.placement.explain("out1").text
    assert text.endswith("planned for the step that runs sum (what nothing consumes)"), text
