"""Differential test: random DAGs x random device setups x random pins against plain NumPy.

Each hypothesis example (``dag_strategies.cases``) is a device setup (CPU plus 0-8 simulated
GPUs, some hidden, some split into logical GPUs, soft placement on or off), a random program of
1-30 nodes with random device scopes, feeds and fetch structures. The program is rendered as
placeviz source (``render``), executed node by node, run in a session, and every fetched value is
compared with ``evaluate``, a NumPy evaluation of the same description that never touches
placeviz. Placement is checked too: every op placed on a device of the session, where its scopes
(or TensorFlow's defaults and soft placement) say, for the reason they say. Some examples grow
the graph after the first runs, so sticky placement and plan caching across graph versions are
covered as well.

When an example fails, hypothesis prints the rendered program, ready to paste into a reproducer.
Examples: PLACEVIZ_DIFF_EXAMPLES (default 500).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import numpy as np
from dag_strategies import Case, DeviceSetup, Fetch, Node, cases, fetch_leaves, map_fetches
from hypothesis import HealthCheck, given, note, settings

import placeviz as pv
from placeviz.contract import ReasonKind

LOCAL = "/job:localhost/replica:0/task:0/device:"
MIB = 1 << 20
EXAMPLES = int(os.environ.get("PLACEVIZ_DIFF_EXAMPLES", "500"))


# -- the NumPy reference ---------------------------------------------------------------------
def _reference(node: Node, args: list[np.ndarray]) -> Any:
    kind, a = node.kind, node.attrs
    x = args[0] if args else None
    if kind in ("const", "variable"):
        return node.value
    if kind in ("negative", "neg_op"):
        return np.negative(x)
    if kind in ("abs", "abs_op"):
        return np.abs(x)
    if kind == "square":
        return np.square(x)
    if kind == "pow2_op":
        return np.power(x, np.asarray(2, x.dtype))
    if kind == "tanh":
        return np.tanh(x)
    if kind == "sigmoid":
        return 1 / (1 + np.exp(-x))
    if kind == "relu":
        return np.maximum(x, 0)
    if kind in ("identity", "coloc"):
        return x
    if kind == "sqrt_pos":
        return np.sqrt(np.square(x) + 1)
    if kind == "log_pos":
        return np.log(np.abs(x) + 1)
    if kind == "exp_neg":
        return np.exp(-np.square(x))
    if kind == "cast":
        return x.astype(node.dtype)
    if kind == "scalar_op":
        s = np.asarray(a["s"], x.dtype)
        ops = {
            "x+s": lambda: x + s,
            "s+x": lambda: s + x,
            "x-s": lambda: x - s,
            "s-x": lambda: s - x,
            "x*s": lambda: x * s,
            "s*x": lambda: s * x,
            "x/s": lambda: x / s,
        }
        return ops[a["op"]]()
    if kind == "transpose":
        return np.transpose(x, a["perm"])
    if kind == "reshape":
        return np.reshape(x, a["shape"])
    if kind == "reduce":
        axis = a["axis"]
        if axis is not None:
            axes = axis if isinstance(axis, list) else [axis]
            axis = tuple(sorted({ax % x.ndim for ax in axes}))
        return getattr(np, a["fn"])(x, axis=axis, keepdims=a["keepdims"])
    if kind == "split":
        sizes, axis = a["sizes"], a["axis"]
        if isinstance(sizes, list):
            sizes = [x.shape[axis] - sizes[0] if s == -1 else s for s in sizes]
            sizes = list(np.cumsum(sizes)[:-1])
        return np.split(x, sizes, axis=axis)[a["pick"]]
    binary = {
        "add": np.add,
        "add_op": np.add,
        "subtract": np.subtract,
        "sub_op": np.subtract,
        "multiply": np.multiply,
        "mul_op": np.multiply,
        "maximum": np.maximum,
        "minimum": np.minimum,
    }
    if kind in binary:
        return binary[kind](x, args[1])
    if kind == "div_pos":
        return x / (np.square(args[1]) + 1)
    if kind == "matmul":
        left = x.T if a["transpose_a"] else x
        right = args[1].T if a["transpose_b"] else args[1]
        return left @ right
    if kind == "add_n":
        return functools.reduce(np.add, args)
    if kind == "concat":
        return np.concatenate(args, axis=a["axis"])
    if kind == "stack":
        return np.stack(args, axis=a["axis"])
    raise AssertionError(f"no reference for {kind}")


def evaluate(nodes: tuple[Node, ...], feeds: dict[int, np.ndarray]) -> list[np.ndarray]:
    """Every node's value, in plain NumPy; a fed node takes its fed value."""
    values: list[np.ndarray] = []
    with np.errstate(all="ignore"):
        for i, node in enumerate(nodes):
            if i in feeds:
                value = np.asarray(feeds[i], dtype=node.dtype)
            else:
                value = np.asarray(_reference(node, [values[j] for j in node.inputs]))
            assert value.dtype == node.dtype and value.shape == node.shape, (i, node)
            values.append(value)
    return values


# -- the same description as placeviz source ---------------------------------------------------
def _array(value: np.ndarray) -> str:
    return f"np.array({value.tolist()!r}, dtype=np.{value.dtype})"


def _spec(spec: Any) -> str:
    if isinstance(spec, pv.DeviceSpec):
        return f"pv.DeviceSpec(device_type={spec.device_type!r}, device_index={spec.device_index})"
    return repr(spec)


def expression(node: Node) -> str:
    """The placeviz expression that builds ``node`` from ``n0``, ``n1``, ..."""
    kind, a = node.kind, node.attrs
    args = [f"n{i}" for i in node.inputs]
    x = args[0] if args else ""
    y = args[1] if len(args) > 1 else ""
    simple = {
        "negative": f"pv.negative({x})",
        "neg_op": f"-{x}",
        "abs": f"pv.abs({x})",
        "abs_op": f"abs({x})",
        "square": f"pv.square({x})",
        "pow2_op": f"{x} ** 2",
        "tanh": f"pv.tanh({x})",
        "sigmoid": f"pv.sigmoid({x})",
        "relu": f"pv.nn.relu({x})",
        "identity": f"pv.identity({x})",
        "coloc": f"pv.identity({x})",
        "sqrt_pos": f"pv.sqrt(pv.square({x}) + 1.0)",
        "log_pos": f"pv.log(pv.abs({x}) + 1.0)",
        "exp_neg": f"pv.exp(-pv.square({x}))",
        "cast": f"pv.cast({x}, pv.{node.dtype})",
        "add": f"pv.add({x}, {y})",
        "subtract": f"pv.subtract({x}, {y})",
        "multiply": f"pv.multiply({x}, {y})",
        "maximum": f"pv.maximum({x}, {y})",
        "minimum": f"pv.minimum({x}, {y})",
        "add_op": f"{x} + {y}",
        "sub_op": f"{x} - {y}",
        "mul_op": f"{x} * {y}",
        "add_n": f"pv.add_n([{', '.join(args)}])",
    }
    if kind in simple:
        return simple[kind]
    if kind == "const":
        return f"pv.constant({_array(node.value)})"
    if kind == "variable":
        return f"pv.Variable({_array(node.value)})"
    if kind == "placeholder":
        return f"pv.placeholder(pv.{node.dtype}, {a['static']!r})"
    if kind == "scalar_op":
        left, op, right = a["op"]
        operands = {"x": x, "s": repr(a["s"])}
        return f"{operands[left]} {op} {operands[right]}"
    if kind == "transpose":
        perm = "" if a["perm"] is None else f", perm={list(a['perm'])}"
        return f"pv.transpose({x}{perm})"
    if kind == "reshape":
        return f"pv.reshape({x}, {list(a['shape'])})"
    if kind == "reduce":
        return f"pv.reduce_{a['fn']}({x}, axis={a['axis']!r}, keepdims={a['keepdims']})"
    if kind == "split":
        return f"pv.split({x}, {a['sizes']!r}, axis={a['axis']})[{a['pick']}]"
    if kind == "div_pos":
        if a["operator"]:
            return f"{x} / (pv.square({y}) + 1.0)"
        return f"pv.divide({x}, pv.add(pv.square({y}), 1.0))"
    if kind == "matmul":
        if a["operator"]:
            return f"{x} @ {y}"
        flags = f"transpose_a={a['transpose_a']}, transpose_b={a['transpose_b']}"
        return f"pv.matmul({x}, {y}, {flags})"
    if kind in ("concat", "stack"):
        return f"pv.{kind}([{', '.join(args)}], axis={a['axis']})"
    raise AssertionError(f"no expression for {kind}")


def statement(i: int, node: Node) -> str:
    """``n<i> = <expression>``, inside the node's device, control and colocation scopes."""
    contexts = [f"pv.device({_spec(scope.spec)})" for scope in node.scopes]
    if node.control:
        contexts.append(f"pv.control_dependencies([{', '.join(f'n{j}' for j in node.control)}])")
    if node.kind == "coloc":
        contexts.append(f"pv.colocate_with(n{node.attrs['target']})")
    line = f"n{i} = {expression(node)}"
    if not contexts:
        return line
    return f"with {', '.join(contexts)}:\n    {line}"


def setup_program(setup: DeviceSetup) -> str:
    lines = [f"pv.config.simulate_gpus({setup.n_physical})"]
    if setup.n_physical:
        lines.append("gpus = pv.config.list_physical_devices('GPU')")
    if len(setup.visible) != setup.n_physical:
        chosen = ", ".join(f"gpus[{p}]" for p in setup.visible)
        lines.append(f"pv.config.set_visible_devices([{chosen}], 'GPU')")
    for p, k in zip(setup.visible, setup.splits):
        if k:
            lines.append(
                f"pv.config.set_logical_device_configuration(gpus[{p}], "
                f"[pv.config.LogicalDeviceConfiguration(memory_limit=1024)] * {k})"
            )
    if setup.soft and not setup.soft_via_config:
        lines.append("pv.config.set_soft_device_placement(True)")
    return "\n".join(lines)


def session_program(setup: DeviceSetup) -> str:
    options = []
    if setup.soft and setup.soft_via_config:
        options.append("allow_soft_placement=True")
    if setup.log:
        options.append("log_device_placement=True")
    return f"sess = pv.Session(config=pv.ConfigProto({', '.join(options)}))"


def render(case: Case) -> str:
    """The whole case as a placeviz program (what hypothesis prints for a failing example)."""

    def feeds(indices: Any) -> str:
        keys = {i: f"n{i}.name" if i in case.feed_by_name else f"n{i}" for i in indices}
        return "{" + ", ".join(f"{keys[i]}: {_array(case.feeds[i])}" for i in indices) + "}"

    def fetch_text(structure: Any) -> str:
        return repr(map_fetches(lambda f: _FetchText(f, case.nodes[f.index]), structure))

    lines = [setup_program(case.setup)]
    lines += [statement(i, n) for i, n in enumerate(case.nodes[: case.n_first])]
    lines.append("init = pv.global_variables_initializer()")
    lines.append(session_program(case.setup))
    lines.append("sess.run(init)")
    first = [i for i in case.feeds if i < case.n_first]
    lines.append(f"sess.run({fetch_text(case.fetches)}, {feeds(first)})")
    if case.fetches_after is not None:
        lines += [statement(i, n) for i, n in enumerate(case.nodes) if i >= case.n_first]
        lines.append("sess.run(pv.global_variables_initializer())")
        lines.append(f"sess.run({fetch_text(case.fetches_after)}, {feeds(case.feeds)})")
    return "\n".join(lines)


class _FetchText:
    """A fetch as the source that names it (its repr), for ``render``."""

    def __init__(self, fetch: Fetch, node: Node) -> None:
        self.fetch = fetch
        self.node = node

    def __repr__(self) -> str:
        name = f"n{self.fetch.index}"
        if self.fetch.how == "name":
            return f"{name}.name"
        if self.fetch.how == "op":
            return f"{name}.value().op" if self.node.kind == "variable" else f"{name}.op"
        return name


# -- building and checking ---------------------------------------------------------------------
class Built:
    """The placeviz objects of a case: ``n<i>`` in ``namespace``, the ops each node made."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"pv": pv, "np": np}
        self.created: dict[int, list[str]] = {}

    def add(self, case: Case, start: int, stop: int) -> None:
        graph = pv.get_default_graph()
        for i in range(start, stop):
            before = len(graph.get_operations())
            exec(compile(statement(i, case.nodes[i]), f"<node {i}>", "exec"), self.namespace)
            self.created[i] = [op.name for op in graph.get_operations()[before:]]
            assert self.created[i], f"node {i} made no op"

    def node(self, i: int) -> Any:
        return self.namespace[f"n{i}"]

    def tensor(self, i: int) -> pv.Tensor:
        value = self.node(i)
        return value.value() if isinstance(value, pv.Variable) else value

    def fetch(self, fetch: Fetch) -> Any:
        value = self.node(fetch.index)
        if fetch.how == "name":
            return value.name
        if fetch.how == "op":
            return self.tensor(fetch.index).op
        return value

    def feed_dict(self, case: Case, indices: list[int], sign: float = 1.0) -> dict[Any, Any]:
        feeds: dict[Any, Any] = {}
        for i in indices:
            key = self.tensor(i).name if i in case.feed_by_name else self.tensor(i)
            feeds[key] = sign * case.feeds[i]
        return feeds


def expected_placement(case: Case, i: int) -> tuple[str, str]:
    """(short device name, reason kind) for the ops node ``i`` makes, by TensorFlow's rules."""
    node = case.nodes[i]
    if node.kind == "coloc":
        target = node.attrs["target"]
        device, _ = expected_placement(case, target)
        root = target
        while case.nodes[root].kind == "coloc":
            root = case.nodes[root].attrs["target"]
        sticky = i >= case.n_first and root < case.n_first
        return device, "sticky" if sticky else "colocated"
    device_type, index = node.request()
    first = "GPU:0" if case.setup.n_gpus else "CPU:0"
    if device_type is None:
        return first, "default"
    if case.setup.has(device_type, index):
        return f"{device_type}:{index or 0}", "pinned"
    assert case.setup.soft
    return first, "soft"


def check_devices(sess: pv.Session, setup: DeviceSetup) -> None:
    names = [LOCAL + "CPU:0"] + [f"{LOCAL}GPU:{i}" for i in range(setup.n_gpus)]
    assert [d.name for d in sess.devices] == names
    gpus = [d for d in sess.devices if d.device_type == "GPU"]
    assert [d.physical.index for d in gpus] == setup.physical_of_gpus()
    limits = [k for k in setup.splits for _ in range(max(k, 1))]
    for device, k in zip(gpus, limits):
        if k:
            assert device.memory_limit == 1024 * MIB, device


def follows_a_neighbour(sess: pv.Session, name: str) -> bool:
    """TF's heuristics place an op with a consumer or an input; the op-by-op rules above do not
    model them (test_placer_heuristics.py checks them against TensorFlow's own placements), so
    here the op must simply be where the neighbour its reason names is."""
    reason = sess.placement.explain(name)
    while reason.kind == "colocated" and reason.anchor is not None:
        assert sess.placement[name] == sess.placement[reason.anchor], (name, reason)
        reason = sess.placement.explain(reason.anchor)
    if reason.kind not in (ReasonKind.GENERATOR, ReasonKind.METADATA, ReasonKind.IDENTITY):
        return False
    assert reason.anchor is not None
    assert sess.placement[name] == sess.placement[reason.anchor], (name, reason)
    return True


def check_placement(sess: pv.Session, case: Case, built: Built, upto: int) -> None:
    devices = {d.name for d in sess.devices}
    for op in pv.get_default_graph().get_operations():
        assert op.name in sess.placement, f"{op.name} was not placed"
        device = sess.placement[op.name]
        reason = sess.placement.explain(op.name)
        assert device in devices, (op.name, device)
        assert reason.kind in list(ReasonKind), (op.name, reason)
        assert reason.device == device, (op.name, reason)
    for i in range(upto):
        device, kind = expected_placement(case, i)
        if case.nodes[i].kind == "coloc":  # wherever its target went, heuristics included
            target = built.tensor(case.nodes[i].attrs["target"]).op.name
            device = sess.placement[target].removeprefix(LOCAL)
        for name in built.created[i]:
            if not follows_a_neighbour(sess, name):
                assert sess.placement[name] == LOCAL + device, (i, name, kind)
        main = built.tensor(i).op.name
        actual = sess.placement.explain(main).kind
        if follows_a_neighbour(sess, main):
            continue
        if case.nodes[i].kind == "variable":
            assert sess.placement.explain(built.node(i).op.name).kind == kind, (i, main)
            assert actual == "colocated", (i, main)
        else:
            assert actual == kind, (i, main, sess.placement.explain(main))


def check_values(case: Case, structure: Any, got: Any, want: list[np.ndarray]) -> None:
    if isinstance(structure, Fetch):
        if structure.how == "op":
            assert got is None
            return
        node, ref = case.nodes[structure.index], want[structure.index]
        assert isinstance(got, np.ndarray | np.generic), (structure, type(got))
        value = np.asarray(got)
        assert value.dtype == ref.dtype, (structure, value.dtype, ref.dtype)
        assert value.shape == ref.shape, (structure, value.shape, ref.shape)
        rtol = 1e-5 if node.loose else 1e-12
        np.testing.assert_allclose(
            value, ref, rtol=rtol, atol=rtol * node.scale / 10, err_msg=f"n{structure.index}"
        )
        return
    if isinstance(structure, dict):
        assert isinstance(got, dict) and list(got) == list(structure), got
        for key in structure:
            check_values(case, structure[key], got[key], want)
        return
    assert type(got) is type(structure) and len(got) == len(structure), got
    for sub, value in zip(structure, got):
        check_values(case, sub, value, want)


def assert_same(a: Any, b: Any) -> None:
    """Two runs' results: equal structure, dtypes and values (bit for bit)."""
    if isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            assert_same(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    elif a is None:
        assert b is None
    else:
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(a, b)


def scribble(result: Any) -> None:
    """Overwrite every array the caller got: it owns them, the next runs must not notice."""
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, list | tuple):
        for item in result:
            scribble(item)
    elif isinstance(result, np.ndarray) and result.flags.writeable:
        result[...] = 12345.0


def run_and_check(sess: pv.Session, case: Case, built: Built, structure: Any, upto: int) -> None:
    fed = [i for i in case.feeds if i < upto]
    fetches = map_fetches(built.fetch, structure)
    want = evaluate(case.nodes[:upto], {i: case.feeds[i] for i in fed})
    with np.errstate(all="ignore"):
        got = sess.run(fetches, built.feed_dict(case, fed))
        check_values(case, structure, got, want)
        again = sess.run(fetches, built.feed_dict(case, fed))  # the cached plan
        assert_same(got, again)
        scribble(got)
        negated = sess.run(fetches, built.feed_dict(case, fed, sign=-1.0))
    want_negated = evaluate(case.nodes[:upto], {i: -case.feeds[i] for i in fed})
    check_values(case, structure, negated, want_negated)
    for fetch in fetch_leaves(structure):
        assert built.tensor(fetch.index).op.name in sess.placement


def run_case(case: Case, setup: Callable[[DeviceSetup], str] = setup_program) -> None:
    """``setup``: the program that makes the case's devices (simulated GPUs, or a real card's
    logical GPUs: tests/gpu)."""
    pv.config.reset_devices()
    pv.reset_default_graph()
    exec(setup(case.setup), {"pv": pv})
    built = Built()
    built.add(case, 0, case.n_first)
    init = pv.global_variables_initializer()
    exec(session_program(case.setup), built.namespace)
    sess = built.namespace["sess"]
    check_devices(sess, case.setup)
    sess.run(init)
    check_placement(sess, case, built, case.n_first)
    run_and_check(sess, case, built, case.fetches, case.n_first)
    if case.fetches_after is None:
        return
    before = {name: (sess.placement[name], sess.placement.explain(name)) for name in sess.placement}
    built.add(case, case.n_first, len(case.nodes))
    sess.run(pv.global_variables_initializer())
    check_placement(sess, case, built, len(case.nodes))
    for name, (device, reason) in before.items():
        assert sess.placement[name] == device and sess.placement.explain(name) == reason, name
    run_and_check(sess, case, built, case.fetches_after, len(case.nodes))


# -- the property ------------------------------------------------------------------------------
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=cases())
def test_random_programs_match_numpy(case: Case) -> None:
    note(render(case))
    run_case(case)


# -- what the property found, minimised (regression tests) -----------------------------------
def test_control_dependency_on_fed_placeholder() -> None:
    """TF's FeedInputs (core/graph/subgraph.cc) moves a fed Placeholder's control edges to the
    feed: the placeholder does not need a value of its own."""
    p = pv.placeholder(pv.float32, [2])
    with pv.control_dependencies([p]):
        y = pv.identity(pv.constant([1.0, 2.0]))
    np.testing.assert_array_equal(pv.Session().run(y, {p: [3.0, 4.0]}), [1.0, 2.0])


def test_identity_of_variable_reads_its_value() -> None:
    """TF1 converts a Variable argument to its value (variable/read): the Identity is not
    colocated with the variable, so pins that differ are no conflict."""
    pv.config.simulate_gpus(1)
    with pv.device("/gpu:0"):
        v = pv.Variable([1.0, 2.0])
    with pv.device("/cpu:0"):
        y = pv.identity(v)
    sess = pv.Session()
    sess.run(pv.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(y), [1.0, 2.0])
    assert sess.placement[v.op.name] == LOCAL + "GPU:0"
    assert sess.placement[y.op.name] == LOCAL + "CPU:0"
    assert sess.placement.explain(y.op.name).kind == "pinned"


def test_fed_tensor_whose_op_is_a_control_input() -> None:
    """Consumers of a fed tensor see the fed value, whatever else the tensor's op is for."""
    c = pv.constant(1.0)
    with pv.control_dependencies([c]):
        d = pv.constant(2.0)
    y = pv.negative(c)
    assert pv.Session().run([d, y], {c: 5.0}) == [2.0, -5.0]


def test_fed_tensor_whose_op_is_fetched() -> None:
    c = pv.constant(1.0)
    y = pv.negative(c)
    assert pv.Session().run([c.op, c, y], {c: 5.0}) == [None, 5.0, -5.0]


def test_add_n_of_three_scalars() -> None:
    total = pv.add_n([pv.constant(1.0), pv.constant(2.0), pv.constant(3.0)])
    assert pv.Session().run(total) == 6.0
