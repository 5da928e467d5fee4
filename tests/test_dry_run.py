"""Dry runs (issue 27): shapes, placements, events, modeled times and memory as a real run's,
with nothing computed or allocated.

The differential tests run each program for real and dry, in two sessions on one graph, and
compare what the real run shows (values' shapes and dtypes, placements, its steps in order with
their bytes, its allocations and frees, the modeled durations of simulated GPUs' steps) with
what the dry run shows. Allocations and frees are compared as a multiset: their order follows
the steps' times, which a real run takes from the host's clock for the CPU's steps."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np
import pytest
from conformance.harness import Program, Run, _steps
from conformance.programs import PROGRAMS

import placeviz as pv
from placeviz.contract import EventKind, TimingSource
from placeviz.events.document import validate
from placeviz.examples import zoo

_STEP_KINDS = (int(EventKind.OP), int(EventKind.TRANSFER), int(EventKind.NOT_RUN))
_MEMORY_KINDS = (int(EventKind.ALLOC), int(EventKind.FREE))
FULL = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
DRY = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE, dry_run=True)


def shapes_of(value: Any) -> Any:
    """A fetched structure with each array (or ShapedArray) as (shape, dtype name)."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {k: shapes_of(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shapes_of(v) for v in value]
    if isinstance(value, pv.ShapedArray):
        return (value.shape, value.dtype.name)
    array = np.asarray(value)
    dtype = "string" if array.dtype.kind in "SUO" else pv.as_dtype(array.dtype).name
    return (tuple(array.shape), dtype)


def run_facts(sess: pv.Session, fetches: Any, feed: Any, options: pv.RunOptions) -> dict:
    """One run's fetched shapes and events: its steps in order, its memory, modeled times."""
    value = sess.run(fetches, feed_dict=feed, options=options)
    events = sess.trace(runs=1).events
    ran = events["run"] >= 0
    steps = np.isin(events["kind"], _STEP_KINDS) & ran
    memory = np.isin(events["kind"], _MEMORY_KINDS) & ran
    modeled = steps & (events["source"] == int(TimingSource.MODELED))

    def rows(mask: np.ndarray, *columns: str) -> list[tuple[int, ...]]:
        return list(zip(*(events[c][mask].tolist() for c in columns)))

    durations = (events["t1"] - events["t0"])[modeled].tolist()
    return {
        "shapes": shapes_of(value),
        "steps": rows(steps, "kind", "node", "device", "peer", "bytes"),
        "memory": Counter(rows(memory, "kind", "node", "device", "bytes")),
        "modeled": dict(zip(rows(modeled, "kind", "node", "device", "peer"), durations)),
    }


def assert_same(real: dict, dry: dict) -> None:
    assert dry["shapes"] == real["shapes"]
    assert dry["steps"] == real["steps"]
    assert dry["memory"] == real["memory"]
    for step, duration in real["modeled"].items():  # a simulated GPU's steps
        assert dry["modeled"][step] == duration, step
    assert dry["modeled"].keys() >= real["modeled"].keys()


def compare_program(program: Program) -> str | None:
    """Run the program's runs for real, then dry; None when they agree, else why the dry run
    refused it (control flow, a shape only values give). A real run that fails: skipped."""
    graph = pv.Graph()
    with graph.as_default():
        try:
            runs = [s for s in _steps(program.build(pv)) if isinstance(s, Run)]
        except Exception as exc:  # a program about errors
            return f"building fails: {type(exc).__name__}"

        if not runs:
            return "runs nothing"
        config = dict(device_count={"CPU": program.cpus}, allow_soft_placement=program.soft)
        real, dry = (
            pv.Session(config=pv.ConfigProto(**config)),
            pv.Session(config=pv.ConfigProto(**config, dry_run=True)),
        )
        with real, dry:
            for run in runs:
                try:
                    expected = run_facts(real, run.fetches, run.feed, FULL)
                except Exception as exc:  # a program about errors: nothing to compare
                    return f"real run fails: {type(exc).__name__}"
                try:
                    found = run_facts(dry, run.fetches, run.feed, DRY)
                except pv.errors.InvalidArgumentError as exc:
                    if "depends on the" not in str(exc):
                        raise
                    return f"value-dependent shape: {exc}"
                assert_same(expected, found)
            assert dict(dry.placement) == dict(real.placement)
    return None


# What a dry run refuses, and why: values decide them. Every other conformance program that
# runs without error (while loops among them) must agree.
# Ops whose output shapes values decide: which elements are true, how ids partition, what a
# checkpoint file holds, what a TensorArray was written, a float fed as a Range's bound, a
# cond's branches of different shapes; conds whose predicate a computed value decides, and
# loops whose condition does.
_VALUE_DEPENDENT = re.compile(
    r"values of '[^']*' \((Where|DynamicPartition|RestoreV2|TensorArray\w*|Range|Merge|LoopCond),"
    r"|which branch of '[^']*' \((Ref)?Switch,"
)


def test_dry_runs_agree_with_real_runs_over_the_conformance_programs() -> None:
    """Every program that runs: programs about errors, and those whose real run fails, have
    nothing to compare; shapes, branches and loops' trip counts only values give are refused
    by name."""
    pv.config.simulate_gpus(0)
    compared, refused = 0, []
    for name, program in PROGRAMS.items():
        if program.error:
            continue
        reason = compare_program(program)
        if reason is None:
            compared += 1
        elif reason.startswith("value-dependent"):
            assert _VALUE_DEPENDENT.search(reason), f"{name}: {reason}"
            refused.append(name)
    assert compared > 1040, compared
    assert len(refused) < 60, refused


def step_both_ways(real: pv.Session, dry: pv.Session, built: zoo.Model) -> dict[str, Any]:
    """A zoo model's initializer and one training step run real and dry, their facts compared;
    the real step's facts."""
    init = pv.global_variables_initializer()
    assert_same(run_facts(real, init, None, FULL), run_facts(dry, init, None, DRY))
    fetches = [built.train_op, built.loss]
    expected = run_facts(real, fetches, built.feed, FULL)
    feed = {t: pv.ShapedArray(v.shape, t.dtype) for t, v in built.feed.items()}
    assert_same(expected, run_facts(dry, fetches, feed, DRY))
    return expected


def test_a_looped_lstm_runs_dry_as_it_runs_for_real_on_simulated_gpus() -> None:
    """dynamic_rnn's loop and its gradient's (which pops what the forward loop pushed), a
    layer per GPU: the same steps inside the loops, iteration by iteration, the same memory
    and each GPU step's modeled time."""
    pv.config.simulate_gpus(2, "H100")
    graph = pv.Graph()
    with graph.as_default():
        built = zoo.ZOO["lstm_dynamic"](pv)
        config = pv.ConfigProto(allow_soft_placement=True)
        dry_config = pv.ConfigProto(allow_soft_placement=True, dry_run=True)
        with pv.Session(config=config) as real, pv.Session(config=dry_config) as dry:
            expected = step_both_ways(real, dry, built)
            assert dict(dry.placement) == dict(real.placement)
            looped = real.trace(runs=1).events["frame"] >= 0
            assert looped.sum() > 1000  # both loops' executions, compared one by one
            allocated = sum(n for (kind, *_), n in expected["memory"].items() if kind == 4)
            assert allocated > 1000  # the loops' buffers among them


@pytest.mark.parametrize("model", ["cifar10", "resnet", "bert", "gpt", "lstm"])
def test_dry_runs_agree_with_real_runs_of_the_zoo_on_simulated_gpus(model: str) -> None:
    """Each GPU step's modeled time too, and the memory each GPU held."""
    pv.config.simulate_gpus(2, "H100")
    graph = pv.Graph()
    with graph.as_default():
        built = zoo.ZOO[model](pv)
        with pv.Session() as real, pv.Session(config=pv.ConfigProto(dry_run=True)) as dry:
            expected = step_both_ways(real, dry, built)
            assert any(kind == int(EventKind.OP) for kind, *_ in expected["modeled"])
            assert dict(dry.placement) == dict(real.placement)
            gpus = [d.name for d in real.devices if d.device_type == "GPU"]
            for gpu in gpus:
                device = next(d for d in real.devices if d.name == gpu)
                assert dry.reserved_bytes(device) == real.reserved_bytes(device)


@pytest.mark.parametrize("gpu", ["small simulated GPU", "small logical GPU"])
def test_a_dry_run_runs_out_of_memory_at_the_op_a_real_run_does(gpu: str) -> None:
    if gpu == "small simulated GPU":
        pv.config.simulate_gpus(1, "H100", memory_limit_mb=4)
    else:  # two logical GPUs of 4 MiB carved from one simulated H100
        pv.config.simulate_gpus(1, "H100")
        card = pv.config.list_physical_devices("GPU")[0]
        pv.config.set_logical_device_configuration(
            card, [pv.config.LogicalDeviceConfiguration(memory_limit=4)] * 2
        )
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [None, 256])
        with pv.device("/gpu:0"):
            h = pv.matmul(x, pv.ones([256, 512]))  # 512 KiB per 256 rows
            y = pv.reduce_sum(pv.nn.relu(h) * h)
        errors = []
        for options in (FULL, DRY):
            with pv.Session() as sess:
                with pytest.raises(pv.errors.ResourceExhaustedError) as caught:
                    sess.run(y, {x: np.zeros((1024, 256), np.float32)}, options=options)
                errors.append(caught.value)
        real, dry = errors
        assert dry.op is real.op
        assert str(dry) == str(real)
        assert "Largest live tensors" in str(dry) and "limit 4194304 bytes" in str(dry)
        with pv.Session(config=pv.ConfigProto(dry_run=True)) as sess:  # 256 rows fit
            assert sess.run(y, {x: pv.ShapedArray([256, 256], pv.float32)}).shape == ()


def test_fetches_are_shaped_arrays_with_numpy_sizes() -> None:
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [None, 3, 4])
        n = pv.shape(x)[0]
        flat = pv.reshape(x, pv.stack([n * 3, -1]))
        product = pv.matmul(pv.cast(flat, pv.float64), pv.ones([4, 5], pv.float64)[:, :2])
        with pv.Session(config=pv.ConfigProto(dry_run=True)) as sess:
            fetched = sess.run(
                {"flat": flat, "product": product, "n": n}, {x: np.zeros((7, 3, 4), np.float32)}
            )
    reference = np.zeros((7, 3, 4), np.float32).reshape(21, -1)
    assert fetched["flat"] == pv.ShapedArray(reference.shape, pv.float32)
    assert fetched["flat"].nbytes == reference.nbytes
    assert fetched["product"].shape == (21, 2) and fetched["product"].dtype is pv.float64
    assert fetched["n"] == pv.ShapedArray((), pv.int32)


def test_variables_initialized_dry_hold_shaped_arrays() -> None:
    graph = pv.Graph()
    with graph.as_default():
        v = pv.Variable(pv.zeros([1000, 1000]), name="v")
        step = v.assign_add(pv.ones([1000, 1000]))
        with pv.Session(config=pv.ConfigProto(dry_run=True)) as sess:
            with pytest.raises(pv.errors.FailedPreconditionError, match="uninitialized value v"):
                sess.run(step)
            sess.run(v.initializer)
            assert sess.run(v) == pv.ShapedArray([1000, 1000], pv.float32)
            assert sess.run(step).shape == (1000, 1000)
        with pv.Session() as sess:  # a real session's values: a dry run sees their shapes
            sess.run(v.initializer)
            dry = sess.run(step, options=pv.RunOptions(dry_run=True))
            assert dry == pv.ShapedArray([1000, 1000], pv.float32)
            assert sess.run(v)[0, 0] == 0.0  # the dry step changed nothing
            assert sess.run(step)[0, 0] == 1.0  # a real run of the same fetch: its own plan


def test_a_shape_only_values_give_names_the_op_and_what_to_feed() -> None:
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [None])
        found = pv.where(x > 0)
        total = pv.reduce_sum(pv.gather(x, found[:, 0]))
        with pv.Session(config=pv.ConfigProto(dry_run=True)) as sess:
            with pytest.raises(pv.errors.InvalidArgumentError) as caught:
                sess.run(total, {x: pv.ShapedArray([10], pv.float32)})
            message = str(caught.value)
            assert "'Where' (Where, created at test_dry_run.py:" in message
            assert "feed_dict={'Where:0': pv.ShapedArray([n, 1], pv.int64)}" in message
            fed = {x: pv.ShapedArray([10], pv.float32), found: pv.ShapedArray([4, 1], pv.int64)}
            assert sess.run(pv.gather(x, found[:, 0]), fed).shape == (4,)
            k = pv.placeholder(pv.int32, [])
            top, _ = pv.nn.top_k(x, k)  # a fed k gives its value
            assert sess.run(top, {x: np.zeros(5, np.float32), k: 2}).shape == (2,)
            with pytest.raises(pv.errors.InvalidArgumentError, match="'TopKV2' \\(TopKV2"):
                sess.run(top, {x: np.zeros(5, np.float32), k: pv.ShapedArray([], pv.int32)})


def test_bad_feeds() -> None:
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [None, 3])
        y = x * 2.0
        with pv.Session(config=pv.ConfigProto(dry_run=True)) as sess:
            with pytest.raises(pv.errors.InvalidArgumentError, match="Cannot feed value of shape"):
                sess.run(y, {x: pv.ShapedArray([2, 4], pv.float32)})
            with pytest.raises(pv.errors.InvalidArgumentError, match="of dtype float32"):
                sess.run(y, {x: pv.ShapedArray([2, 3], pv.int32)})
            with pytest.raises(pv.errors.InvalidArgumentError, match="must feed a value"):
                sess.run(y)
        with pv.Session() as sess, pytest.raises(TypeError, match="ShapedArray has no values"):
            sess.run(y, {x: pv.ShapedArray([2, 3], pv.float32)})
    with pytest.raises(ValueError, match="must be known"):
        pv.ShapedArray([None, 3], pv.float32)


def test_a_cond_runs_the_branch_its_known_predicate_takes() -> None:
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [None, 3])
        p = pv.placeholder(pv.bool, [])
        wide = pv.shape(x)[0] > 100  # a predicate shapes decide
        pick = pv.cond(p, lambda: pv.reduce_sum(x, 1), lambda: pv.reduce_sum(x, 0))
        by_shape = pv.cond(wide, lambda: pv.reduce_sum(x, 1), lambda: pv.reduce_sum(x, 0))
        sess = pv.Session(config=pv.ConfigProto(dry_run=True))
        with sess:
            fed = {x: pv.ShapedArray([200, 3], pv.float32)}
            assert sess.run(pick, {**fed, p: True}) == pv.ShapedArray([200], pv.float32)
            assert sess.run(pick, {**fed, p: np.array(False)}).shape == (3,)
            assert sess.run(by_shape, fed).shape == (200,)
            assert sess.run(by_shape, {x: pv.ShapedArray([2, 3], pv.float32)}).shape == (3,)
            unknown = {**fed, p: pv.ShapedArray([], pv.bool)}
            with pytest.raises(pv.errors.InvalidArgumentError, match="feed Placeholder_1 a bool"):
                sess.run(pick, unknown)


def test_a_loop_whose_trip_count_values_decide_is_refused_naming_it() -> None:
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [3], name="x")
        _, y = pv.while_loop(
            lambda i, a: pv.reduce_sum(a) < 100.0, lambda i, a: (i + 1, a * 3.0), [0, x]
        )
        sess = pv.Session(config=pv.ConfigProto(dry_run=True))
        with sess, pytest.raises(pv.errors.InvalidArgumentError) as caught:
            sess.run(y, {x: pv.ShapedArray([3], pv.float32)})
    message = str(caught.value)
    assert caught.value.op.name == "while/LoopCond"
    assert "how many times 'while/while_context' runs depends on the values of" in message
    assert "reading while/Less:0" in message and "maximum_iterations=n" in message


def test_a_loop_counted_by_known_values_runs_dry_and_gives_its_shapes() -> None:
    graph = pv.Graph()
    with graph.as_default():
        x = pv.placeholder(pv.float32, [None, 4], name="x")
        n = pv.placeholder(pv.int32, [], name="n")
        rows = pv.shape(x)[0]
        # a counter against a fed int, one against a shape, and maximum_iterations
        i, grown = pv.while_loop(
            lambda i, a: i < n,
            lambda i, a: (i + 1, pv.concat([a, x], 0)),
            [0, x],
            shape_invariants=[pv.TensorShape([]), pv.TensorShape([None, 4])],
        )
        j, _ = pv.while_loop(lambda j, a: j < rows * 2, lambda j, a: (j + 1, a * 2.0), [0, x])
        k = pv.while_loop(lambda k: k > -1, lambda k: k + 1, [0], maximum_iterations=7)
        with pv.Session(config=pv.ConfigProto(dry_run=True)) as sess:
            found = sess.run([i, grown, j, k], {x: pv.ShapedArray([5, 4], pv.float32), n: 3})
    assert [
        np.asarray(found[0]).item(),
        np.asarray(found[2]).item(),
        np.asarray(found[3]).item(),
    ] == [3, 10, 7]
    assert found[1] == pv.ShapedArray([20, 4], pv.float32)  # 5 rows and 3 times 5 more


def test_the_cpu_is_timed_by_the_host_profile_in_a_dry_run() -> None:
    graph = pv.Graph()
    with graph.as_default():
        a = pv.placeholder(pv.float32, [2048, 2048])
        product = pv.matmul(a, a)
        with pv.Session(config=pv.ConfigProto(dry_run=True)) as sess:
            sess.run(product, {a: pv.ShapedArray([2048, 2048], pv.float32)})
            events = sess.trace(runs=1).events
    step = events["kind"] == int(EventKind.OP)
    assert (events["source"][step] == int(TimingSource.MODELED)).all()
    host = pv.devices.profiles.HOST_PROFILE
    flops = 2 * 2048**3
    expected = flops / host.fp32_flops + host.launch_latency_s
    duration = (events["t1"] - events["t0"])[step][0] / 1e9
    assert duration == pytest.approx(expected, rel=1e-6)


def test_the_trace_marks_dry_runs_and_only_them() -> None:
    """A session's real and dry runs of one step: the dry run's record says so (the inspector's
    run line and a Chrome trace's run name read it), the real one's does not."""
    graph = pv.Graph()
    with graph.as_default():
        a = pv.placeholder(pv.float32, [64, 64])
        product = pv.matmul(a, a)
        with pv.Session() as sess:
            sess.run(product, {a: np.ones((64, 64), np.float32)}, options=FULL)
            sess.run(product, {a: pv.ShapedArray([64, 64], pv.float32)}, options=DRY)
            trace = sess.trace(runs=2)
    real, dry = trace.runs
    assert "dry" not in real and dry["dry"] is True
    validate(trace.to_document())
    names = [e["name"] for e in trace.to_chrome_trace()["traceEvents"] if e.get("cat") == "run"]
    assert names == [f"run {real['id']}", f"run {dry['id']} (dry run, shapes only)"]
