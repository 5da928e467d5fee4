"""Memory accounting balances: over random programs (graph and eager, fed, failing, moving
tensors between devices) no device's memory ever goes below zero, and what a device holds when
the runs are over is exactly its variables' values and, in eager mode, the outputs kept."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import placeviz as pv
from placeviz.contract import EventKind
from placeviz.graph.core import tensor_bytes
from placeviz.runtime.eager import eager_session

DEVICES = ("/cpu:0", "/gpu:0", "/gpu:1")
LEAVES = ("const", "variable", "feed")


@dataclass(frozen=True)
class Node:
    kind: str  # "const", "variable", "feed", "add", "mul", "assign_add", "reshape"
    device: str
    inputs: tuple[int, ...] = ()


@st.composite
def programs(draw: Any, fed: bool = True) -> list[Node]:
    """Up to 10 nodes of shape [4] (a reshape makes [2, 2] and fails when fed 3 values);
    ``fed=False``: no placeholders (eager ops run as they are made)."""
    leaves = LEAVES if fed else LEAVES[:2]
    nodes = [Node(draw(st.sampled_from(leaves)), draw(st.sampled_from(DEVICES)))]
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from((*leaves, "add", "mul", "assign_add", "reshape")))
        device = draw(st.sampled_from(DEVICES))
        vectors = [i for i, n in enumerate(nodes) if n.kind != "reshape"]
        if kind in ("add", "mul"):
            nodes.append(
                Node(kind, device, (draw(st.sampled_from(vectors)), draw(st.sampled_from(vectors))))
            )
        elif kind == "assign_add":
            variables = [i for i, n in enumerate(nodes) if n.kind == "variable"]
            if variables:
                nodes.append(
                    Node(
                        kind,
                        device,
                        (draw(st.sampled_from(variables)), draw(st.sampled_from(vectors))),
                    )
                )
        elif kind == "reshape":
            feeds = [i for i, n in enumerate(nodes) if n.kind == "feed"]
            if feeds:
                nodes.append(Node(kind, device, (draw(st.sampled_from(feeds)),)))
        else:
            nodes.append(Node(kind, device))
    return nodes


def build(nodes: list[Node]) -> tuple[list[Any], list[Any], list[Any]]:
    """The program's tensors, its variables and its placeholders."""
    tensors: list[Any] = []
    variables: list[Any] = []
    feeds: list[Any] = []
    for i, node in enumerate(nodes):
        with pv.device(node.device):
            inputs = [tensors[j] for j in node.inputs]
            if node.kind == "const":
                made = pv.constant(np.arange(4, dtype=np.float32) + i)
            elif node.kind == "variable":
                made = pv.Variable(np.ones(4, np.float32), name=f"v{i}")
                variables.append(made)
            elif node.kind == "feed":
                made = pv.placeholder(pv.float32, [None], name=f"x{i}")
                feeds.append(made)
            elif node.kind == "add":
                made = inputs[0] + inputs[1]
            elif node.kind == "mul":
                made = inputs[0] * inputs[1]
            elif node.kind == "assign_add":
                made = pv.assign_add(inputs[0], inputs[1])
            else:
                made = pv.reshape(inputs[0], [2, 2])
        tensors.append(made)
    return tensors, variables, feeds


def balances(trace: pv.Trace) -> dict[str, int]:
    """Each device's bytes in use after all events; asserts it never went below zero, reading
    the events in the inspector's order (by time, then as recorded)."""
    events = trace.events
    order = np.argsort(events["t0"], kind="stable")
    in_use: dict[int, int] = defaultdict(int)
    for e in order:
        kind = int(events["kind"][e])
        if kind in (EventKind.ALLOC, EventKind.FREE):
            device = int(events["device"][e])
            sign = 1 if kind == EventKind.ALLOC else -1
            in_use[device] += sign * int(events["bytes"][e])
            assert in_use[device] >= 0, f"device {device} below zero at event {e}"
    names = {d["id"]: d["name"] for d in trace.devices}
    return {names[d]: used for d, used in in_use.items() if used}


def variable_bytes(session: pv.Session, variables: list[Any]) -> dict[str, int]:
    held: dict[str, int] = defaultdict(int)
    for variable in variables:
        held[session.placement[variable.op.name]] += tensor_bytes(variable.op.outputs[0]) or 0
    return dict(held)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=programs(), failing=st.booleans(), fetch_all=st.booleans())
def test_graph_runs_hold_only_their_variables_when_done(
    nodes: list[Node], failing: bool, fetch_all: bool
) -> None:
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    with pv.Graph().as_default():
        tensors, variables, feeds = build(nodes)
        fetches = tensors if fetch_all else tensors[-1:]
        with pv.Session(config=pv.ConfigProto(allow_soft_placement=True)) as session:
            session.trace_level = pv.RunOptions.FULL_TRACE
            session.run(pv.global_variables_initializer())
            size = 3 if failing else 4
            feed = {x: np.ones(size, np.float32) for x in feeds}
            for _ in range(2):
                try:
                    session.run(fetches, feed)
                except pv.errors.InvalidArgumentError:
                    assert failing
            assert balances(session.trace(runs=None)) == variable_bytes(session, variables)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=programs(fed=False))
def test_eager_runs_hold_their_variables_and_every_output_kept(nodes: list[Node]) -> None:
    pv.config.reset_devices()
    pv.config.simulate_gpus(2)
    pv.enable_eager_execution()
    pv.reset_default_graph()  # each example its own graph, and so its own eager session
    session = eager_session()
    session.trace_level = pv.RunOptions.FULL_TRACE
    _, variables, _ = build(nodes)
    trace = session.trace(runs=None)
    # every op that ran keeps its outputs on its device (later ops read them there), but for
    # one that forwards its input (a variable's read): its output is that buffer, no new one
    ran = set(trace.events["node"][trace.events["kind"] == EventKind.OP].tolist())
    kept: dict[str, int] = defaultdict(int)
    for op in pv.get_default_graph().get_operations():
        if op.id in ran and not op.op_def.ref_output and op.op_def.forwards_input is None:
            kept[session.placement[op.name]] += sum(tensor_bytes(t) or 0 for t in op.outputs)
    for name, used in variable_bytes(session, variables).items():
        kept[name] += used
    assert balances(trace) == {d: b for d, b in kept.items() if b}


def test_a_fed_value_moved_to_a_gpu_is_held_there_and_the_transfer_carries_its_bytes() -> None:
    pv.config.simulate_gpus(2)
    with pv.device("/gpu:0"):
        x = pv.placeholder(pv.float32, [None], name="x")
    with pv.device("/gpu:1"):
        y = x * 2.0
    with pv.Session() as session:
        session.run(
            y,
            {x: np.ones(5, np.float32)},
            options=pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE),
        )
        trace = session.trace()
    events = trace.events
    moved = events["kind"] == EventKind.TRANSFER
    assert events["bytes"][moved].tolist() == [20]
    held = (events["kind"] == EventKind.ALLOC) & (events["node"] == x.op.id)
    assert events["bytes"][held].tolist() == [20]
    assert balances(trace) == {}


def test_a_switch_forwards_its_data_and_its_dead_output_holds_nothing() -> None:
    pv.config.simulate_gpus(2)
    x = pv.placeholder(pv.float32, [64, 64], name="x")
    flag = pv.placeholder(pv.bool, [], name="flag")
    with pv.device("/gpu:0"):
        result = pv.cond(flag, lambda: pv.matmul(x, x), lambda: pv.reduce_sum(x) * x)
    traced = pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE)
    with pv.Session() as session:
        for taken in (True, False):
            session.run(result, {x: np.ones((64, 64), np.float32), flag: taken}, options=traced)
        trace = session.trace(runs=None)
    events = trace.events
    graph = pv.get_default_graph()
    switches = [op for op in graph.get_operations() if op.type == "Switch"]
    assert switches
    for run in (r["id"] for r in trace.runs):
        for switch in switches:
            mine = (events["run"] == run) & (events["node"] == switch.id)
            allocated = events["bytes"][mine & (events["kind"] == EventKind.ALLOC)]
            # TF's Switch forwards its data to the output taken; the dead one holds nothing
            assert allocated.tolist() == []
            assert events["bytes"][mine & (events["kind"] == EventKind.OP)].tolist() == [
                tensor_bytes(switch.inputs[0])
            ]
    assert balances(trace) == {}


def test_ops_that_forward_their_input_allocate_nothing_and_keep_its_buffer_alive() -> None:
    """TF's Identity, Reshape, ExpandDims, Squeeze and a variable's read hand on their input's
    buffer: a run allocates one buffer for the product and its four views, none for the read,
    and frees the product's buffer only after the last reader of any view (``late``, which
    reads the flattened view after every direct reader of the product is done)."""
    pv.config.simulate_gpus(1)
    with pv.device("/gpu:0"):
        v = pv.Variable(pv.ones([256, 256]), name="v")
        x = pv.placeholder(pv.float32, [256, 256], name="x")
        product = pv.matmul(x, v, name="product")
        flat = pv.reshape(product, [-1], name="flat")
        direct = pv.reduce_sum(product, name="direct")
        with pv.control_dependencies([direct]):
            late = pv.reduce_sum(pv.identity(pv.squeeze(pv.expand_dims(flat, 0)), name="view"))
    with pv.Session() as session:
        session.run(v.initializer)
        session.run(
            [late, direct],  # fetched: a control edge alone would leave it a NoOp (TF's)
            {x: np.ones((256, 256), np.float32)},
            options=pv.RunOptions(trace_level=pv.RunOptions.FULL_TRACE),
        )
        trace = session.trace()
    ev = trace.events
    allocs = ev["kind"] == EventKind.ALLOC
    sizes = {
        trace.node_name(int(n)): int(b) for n, b in zip(ev["node"][allocs], ev["bytes"][allocs])
    }
    assert sizes["product"] == 256 * 256 * 4
    for view in ("v/read", "flat", "ExpandDims", "Squeeze", "view"):
        assert view not in sizes
    frees = (ev["kind"] == EventKind.FREE) & (ev["node"] == product.op.id)
    ops = ev["kind"] == EventKind.OP
    ends = {trace.node_name(int(n)): int(t1) for n, t1 in zip(ev["node"][ops], ev["t1"][ops])}
    assert int(ev["t0"][frees][0]) >= ends[late.op.name] > ends["direct"]
    assert list(balances(trace).values()) == [256 * 256 * 4]  # v's value, held on
