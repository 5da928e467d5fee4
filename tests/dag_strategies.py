"""Hypothesis strategies for ``test_differential.py``: device setups and random DAG programs.

A drawn ``Case`` is plain data (no placeviz objects), so the test can build it twice: once with
placeviz and once with the NumPy reference evaluator. Every node records the static facts the
strategy needs to keep the next draws valid: its shape, dtype, and ``bound``, an upper bound on
the magnitude of its values (inputs are drawn in [-4, 4]; ops that would grow past
``BOUND_LIMIT`` are replaced by a ``tanh``, so values stay finite and comparable).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import placeviz as pv

VALUE_LIMIT = 4.0  # leaves (constants, variables, feeds) are drawn in [-VALUE_LIMIT, VALUE_LIMIT]
BOUND_LIMIT = 1e4  # no node may grow past this magnitude
MAX_NODES = 30
SHAPES = [(), (3,), (4,), (2, 3), (3, 4), (4, 3), (3, 3), (2, 3, 4)]
SCALARS = [0.5, 2.0, -1.5, 3.0, 1, -2]  # Python scalars for operators (ints too: TF converts)

LEAVES = ("const", "placeholder", "variable")
UNARY = (
    "negative",
    "neg_op",  # -x
    "abs",
    "abs_op",  # abs(x)
    "square",
    "pow2_op",  # x ** 2
    "tanh",
    "sigmoid",
    "relu",
    "identity",
    "sqrt_pos",  # sqrt(square(x) + 1)
    "log_pos",  # log(abs(x) + 1)
    "exp_neg",  # exp(-square(x))
    "cast",
    "transpose",
    "reshape",
    "reduce",
    "split",
    "scalar_op",  # x + 2.0, 2.0 - x, x / 2.0, ...
)
BINARY = (
    "add",
    "subtract",
    "multiply",
    "maximum",
    "minimum",
    "add_op",
    "sub_op",
    "mul_op",
    "div_pos",  # x / (square(y) + 1)
    "matmul",
)
NARY = ("add_n", "concat", "stack")
COLOCATED = "coloc"  # identity(x) inside colocate_with(an earlier node)
OP_KINDS = (*UNARY, *BINARY, *NARY, COLOCATED)


# -- the data a case is made of ----------------------------------------------------------------
@dataclass(frozen=True)
class Scope:
    """One ``with pv.device(spec):``; ``device_type``/``index`` are what ``spec`` sets."""

    spec: Any  # a string, a pv.DeviceSpec, or None (clears the outer scopes)
    device_type: str | None = None
    index: int | None = None

    def __repr__(self) -> str:
        return f"device({self.spec!r})"


@dataclass(frozen=True)
class DeviceSetup:
    """``n_physical`` simulated GPUs; ``visible`` of them, each split into ``splits[i]`` logical
    GPUs (0 = no logical configuration, 1..3 = that many of 1024 MiB)."""

    n_physical: int
    visible: tuple[int, ...]  # physical GPU indices made visible (all, when unchanged)
    splits: tuple[int, ...]  # per visible GPU
    soft: bool
    soft_via_config: bool  # ConfigProto(allow_soft_placement=True), else pv.config's default
    log: bool

    @property
    def n_gpus(self) -> int:
        """Logical GPUs a session sees: GPU:0 .. GPU:n_gpus-1."""
        return sum(max(k, 1) for k in self.splits)

    def physical_of_gpus(self) -> list[int]:
        """The physical GPU behind each logical GPU, in order."""
        return [p for p, k in zip(self.visible, self.splits) for _ in range(max(k, 1))]

    def has(self, device_type: str | None, index: int | None) -> bool:
        """Whether a merged request names a device of this setup."""
        if device_type is None:
            return True
        if device_type == "CPU":
            return index in (None, 0)
        return self.n_gpus > 0 and (index is None or index < self.n_gpus)


@dataclass(frozen=True)
class Node:
    kind: str
    inputs: tuple[int, ...] = ()
    attrs: dict[str, Any] = field(default_factory=dict)
    shape: tuple[int, ...] = ()
    dtype: str = "float32"
    bound: float = VALUE_LIMIT  # |value| <= bound
    scale: float = VALUE_LIMIT  # the largest bound among the node and its ancestors
    loose: bool = True  # float32 somewhere in its ancestry: compare with float32 tolerances
    scopes: tuple[Scope, ...] = ()  # device scopes, outermost first
    control: tuple[int, ...] = ()  # control dependencies on earlier nodes
    value: np.ndarray | None = None  # constants' and variables' initial values

    def request(self) -> tuple[str | None, int | None]:
        """The (device type, index) the nested scopes merge into, field by field."""
        device_type, index = None, None
        for scope in self.scopes:
            if scope.spec is None:
                device_type, index = None, None
                continue
            device_type = scope.device_type if scope.device_type is not None else device_type
            index = scope.index if scope.index is not None else index
        return device_type, index


@dataclass(frozen=True)
class Fetch:
    """One leaf of a fetch structure: node ``index`` as a tensor, its name, or its op."""

    index: int
    how: str = "tensor"  # "tensor" | "name" | "op"


@dataclass(frozen=True)
class Case:
    setup: DeviceSetup
    nodes: tuple[Node, ...]
    n_first: int  # nodes[:n_first] exist at the first run; the rest are added afterwards
    feeds: dict[int, np.ndarray]  # node index -> fed value (every placeholder, some others)
    feed_by_name: frozenset[int]
    fetches: Any  # a Fetch, or a list/tuple/dict nesting of them (first runs)
    fetches_after: Any  # the same after the graph grew (None when it does not grow)


def map_fetches(fn: Callable[[Fetch], Any], structure: Any) -> Any:
    if isinstance(structure, Fetch):
        return fn(structure)
    if isinstance(structure, dict):
        return {k: map_fetches(fn, v) for k, v in structure.items()}
    return type(structure)(map_fetches(fn, v) for v in structure)


def fetch_leaves(structure: Any) -> list[Fetch]:
    leaves: list[Fetch] = []
    map_fetches(leaves.append, structure)
    return leaves


# -- device setups -----------------------------------------------------------------------------
@st.composite
def device_setups(draw: st.DrawFn) -> DeviceSetup:
    n_physical = draw(st.integers(0, 8))
    visible = tuple(range(n_physical))
    if n_physical and draw(st.integers(0, 4)) == 0:
        visible = tuple(sorted(draw(st.sets(st.sampled_from(visible), min_size=1))))
    splits = tuple(draw(st.sampled_from([0, 0, 0, 1, 2, 3])) for _ in visible)
    soft = draw(st.booleans())
    soft_via_config = draw(st.booleans())
    log = draw(st.integers(0, 9)) == 0
    return DeviceSetup(n_physical, visible, splits, soft, soft_via_config, log)


def _spec_forms(device_type: str, index: int) -> list[Any]:
    lower = device_type.lower()
    return [
        f"/{lower}:{index}",
        f"/{device_type}:{index}",
        f"{device_type}:{index}",
        f"/device:{device_type}:{index}",
        f"/job:localhost/device:{device_type}:{index}",
        f"/job:localhost/replica:0/task:0/device:{device_type}:{index}",
        pv.DeviceSpec(device_type=device_type, device_index=index),
    ]


@st.composite
def scopes(draw: st.DrawFn, setup: DeviceSetup) -> Scope:
    """A device scope; names a missing device only when soft placement is on."""
    n = setup.n_gpus
    choices = ["cpu", "cpu_any", "clear"]
    if n:
        choices += ["gpu", "gpu", "gpu", "gpu_any"]
    if setup.soft:
        choices += ["missing_gpu", "missing_cpu"] + ([] if n else ["gpu_any"])
    choice = draw(st.sampled_from(choices))
    if choice == "clear":
        return Scope(None)
    if choice == "cpu":
        return Scope(draw(st.sampled_from(_spec_forms("CPU", 0))), "CPU", 0)
    if choice == "cpu_any":
        return Scope(draw(st.sampled_from(["/device:CPU:*", "/CPU:*"])), "CPU", None)
    if choice == "gpu_any":
        return Scope(draw(st.sampled_from(["/device:GPU:*", "/GPU:*", "/gpu:*"])), "GPU", None)
    if choice == "missing_cpu":
        return Scope(draw(st.sampled_from(_spec_forms("CPU", 1))), "CPU", 1)
    index = draw(st.integers(0, n - 1) if choice == "gpu" else st.integers(n, n + 9))
    return Scope(draw(st.sampled_from(_spec_forms("GPU", index))), "GPU", index)


@st.composite
def scope_stacks(draw: st.DrawFn, setup: DeviceSetup) -> tuple[Scope, ...]:
    depth = draw(st.sampled_from([0, 0, 1, 1, 1, 2, 3]))
    stack = tuple(draw(scopes(setup)) for _ in range(depth))
    probe = Node("const", scopes=stack)
    if not setup.soft and not setup.has(*probe.request()):
        stack = stack[-1:]  # e.g. /device:CPU inside /gpu:3 is CPU:3; alone it is CPU:0
    return stack


# -- values ------------------------------------------------------------------------------------
def arrays(dtype: str, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    width = 32 if dtype == "float32" else 64
    elements = st.floats(-VALUE_LIMIT, VALUE_LIMIT, width=width)
    return hnp.arrays(np.dtype(dtype), shape, elements=elements)


# -- nodes -------------------------------------------------------------------------------------
def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _reshape_targets(shape: tuple[int, ...]) -> list[tuple[int, ...]]:
    n = math.prod(shape)
    targets: set[tuple[int, ...]] = {(n,), (1, n), (n, 1), (-1,)}
    for a in range(2, n):
        if n % a == 0:
            targets |= {(a, n // a), (a, -1), (-1, n // a)}
            for b in range(2, n // a):
                if (n // a) % b == 0:
                    targets.add((a, b, n // a // b))
    if n == 1:
        targets.add(())
    return sorted(targets, key=lambda t: (len(t), t))


def _resolve(target: tuple[int, ...], n: int) -> tuple[int, ...]:
    known = math.prod(d for d in target if d != -1)
    return tuple(n // known if d == -1 else d for d in target)


class _Builder:
    """Draws nodes one at a time, each valid for the nodes before it."""

    def __init__(self, draw: st.DrawFn, setup: DeviceSetup) -> None:
        self.draw = draw
        self.setup = setup
        self.nodes: list[Node] = []

    def pick(self, candidates: list[int]) -> int:
        return candidates[self.draw(st.integers(0, len(candidates) - 1))]

    def matching(self, node: Node, shape: bool = True) -> list[int]:
        return [
            i
            for i, n in enumerate(self.nodes)
            if n.dtype == node.dtype and (not shape or n.shape == node.shape)
        ]

    def add(self, placed: int) -> None:
        """Append a node; ``placed`` nodes were already placed by a run (the graph grows)."""
        draw = self.draw
        if placed and draw(st.integers(0, 2)) == 0:
            node = self.op(COLOCATED, targets=placed)  # joins a placed group: sticky
        elif not self.nodes or draw(st.integers(0, 4)) == 0:
            node = self.leaf()
        else:
            node = self.op(draw(st.sampled_from(OP_KINDS)))
        controls: tuple[int, ...] = ()
        if node.kind != "variable" and self.nodes and draw(st.integers(0, 7)) == 0:
            everything = list(range(len(self.nodes)))
            controls = tuple(
                sorted({self.pick(everything) for _ in range(draw(st.integers(1, 2)))})
            )
        ancestors = [self.nodes[i] for i in node.inputs]
        bound = max(node.bound, VALUE_LIMIT)
        node = replace(
            node,
            bound=bound,
            scale=max([bound, *(a.scale for a in ancestors)]),
            loose=node.dtype == "float32" or any(a.loose for a in ancestors),
            scopes=draw(scope_stacks(self.setup)),
            control=controls,
        )
        self.nodes.append(node)

    # -- leaves --------------------------------------------------------------------------------
    def leaf(self) -> Node:
        draw = self.draw
        kind = draw(st.sampled_from(LEAVES))
        dtype = draw(st.sampled_from(["float32", "float32", "float32", "float64"]))
        shape = draw(st.sampled_from(SHAPES))
        if kind == "placeholder":
            static: Any = shape
            how = draw(st.sampled_from(["full", "full", "full", "partial", "unknown"]))
            if how == "partial" and shape:
                at = draw(st.integers(0, len(shape) - 1))
                static = [None if i == at else d for i, d in enumerate(shape)]
            elif how == "unknown":
                static = None
            return Node(kind, (), {"static": static}, shape, dtype)
        return Node(kind, (), {}, shape, dtype, value=draw(arrays(dtype, shape)))

    # -- ops -----------------------------------------------------------------------------------
    def op(self, kind: str, targets: int = 0) -> Node:
        xi = self.pick(list(range(len(self.nodes))))
        x = self.nodes[xi]
        if kind in UNARY:
            node = self.unary(kind, xi, x)
        elif kind in BINARY:
            node = self.binary(kind, xi, x)
        elif kind in NARY:
            node = self.nary(kind, xi, x)
        else:
            target = self.pick(list(range(targets or len(self.nodes))))
            node = Node(kind, (xi,), {"target": target}, x.shape, x.dtype, x.bound)
        if node.bound > BOUND_LIMIT:
            node = Node("tanh", (xi,), {}, x.shape, x.dtype, 1.0)
        return node

    def unary(self, kind: str, xi: int, x: Node) -> Node:
        draw = self.draw
        b = x.bound
        same = {"shape": x.shape, "dtype": x.dtype}
        if kind in ("negative", "neg_op", "abs", "abs_op", "relu", "identity"):
            return Node(kind, (xi,), {}, bound=b, **same)
        if kind in ("square", "pow2_op"):
            return Node(kind, (xi,), {}, bound=b * b, **same)
        if kind in ("tanh", "sigmoid", "exp_neg"):
            return Node(kind, (xi,), {}, bound=1.0, **same)
        if kind == "sqrt_pos":
            return Node(kind, (xi,), {}, bound=b + 1, **same)
        if kind == "log_pos":
            return Node(kind, (xi,), {}, bound=math.log1p(b), **same)
        if kind == "cast":
            dtype = "float64" if x.dtype == "float32" else "float32"
            return Node(kind, (xi,), {}, x.shape, dtype, b)
        if kind == "scalar_op":
            op = draw(st.sampled_from(["x+s", "s+x", "x-s", "s-x", "x*s", "s*x", "x/s"]))
            s = draw(st.sampled_from(SCALARS))
            bound = {"+": b + abs(s), "-": b + abs(s), "*": b * abs(s), "/": b / abs(s)}[op[1]]
            return Node(kind, (xi,), {"op": op, "s": s}, bound=bound, **same)
        rank = len(x.shape)
        if kind == "transpose":
            perm = None
            if rank and draw(st.booleans()):
                perm = tuple(draw(st.permutations(range(rank))))
            order = perm if perm is not None else tuple(reversed(range(rank)))
            shape = tuple(x.shape[p] for p in order)
            return Node(kind, (xi,), {"perm": perm}, shape, x.dtype, b)
        if kind == "reshape":
            target = draw(st.sampled_from(_reshape_targets(x.shape)))
            shape = _resolve(target, math.prod(x.shape))
            return Node(kind, (xi,), {"shape": target}, shape, x.dtype, b)
        if kind == "reduce":
            fn = draw(st.sampled_from(["sum", "mean", "max"]))
            keepdims = draw(st.booleans())
            axis: Any = None
            if rank and draw(st.integers(0, 2)):
                axes = st.integers(-rank, rank - 1)
                if draw(st.booleans()):
                    axis = draw(axes)
                else:
                    # distinct dimensions: TF's kernel rejects one named twice ([1, -1])
                    axis = draw(
                        st.lists(axes, min_size=1, max_size=rank, unique_by=lambda a: a % rank)
                    )
            reduced = (
                set(range(rank))
                if axis is None
                else {a % rank for a in (axis if isinstance(axis, list) else [axis])}
            )
            shape = tuple(
                1 if i in reduced else d
                for i, d in enumerate(x.shape)
                if keepdims or i not in reduced
            )
            count = math.prod(x.shape[i] for i in reduced)
            if count == 0 and fn == "max":
                fn = "sum"  # NumPy's max of nothing raises; TF's is -inf
            bound = b * count if fn == "sum" else b
            attrs = {"fn": fn, "axis": axis, "keepdims": keepdims}
            return Node(kind, (xi,), attrs, shape, x.dtype, bound)
        if kind == "split":
            if not rank:
                return self.unary("identity", xi, x)
            axis = draw(st.integers(-rank, rank - 1))
            size = x.shape[axis]
            if draw(st.booleans()):
                divisors = [d for d in range(1, size + 1) if size % d == 0] or [1, 2]
                num = draw(st.sampled_from(divisors))
                sizes: Any = num
                widths = [size // num] * num
            else:
                cut = draw(st.integers(0, size))
                widths = [cut, size - cut]
                sizes = [cut, -1] if draw(st.booleans()) else widths
            pick = draw(st.integers(0, len(widths) - 1))
            shape = tuple(widths[pick] if i == axis % rank else d for i, d in enumerate(x.shape))
            attrs = {"sizes": sizes, "axis": axis, "pick": pick}
            return Node(kind, (xi,), attrs, shape, x.dtype, b)
        raise AssertionError(kind)

    def binary(self, kind: str, xi: int, x: Node) -> Node:
        draw = self.draw
        if kind == "matmul":
            if len(x.shape) != 2:
                return self.unary("transpose", xi, x)
            ta = draw(st.booleans())
            m, k = (x.shape[1], x.shape[0]) if ta else x.shape
            options = [
                (i, tb)
                for i, n in enumerate(self.nodes)
                if n.dtype == x.dtype and len(n.shape) == 2
                for tb in (False, True)
                if (n.shape[1] if tb else n.shape[0]) == k
            ]
            yi, tb = options[draw(st.integers(0, len(options) - 1))]
            y = self.nodes[yi]
            n_out = y.shape[0] if tb else y.shape[1]
            attrs = {"transpose_a": ta, "transpose_b": tb, "operator": False}
            if not ta and not tb:
                attrs["operator"] = draw(st.booleans())
            return Node(kind, (xi, yi), attrs, (m, n_out), x.dtype, k * x.bound * y.bound)
        candidates = [
            i
            for i, n in enumerate(self.nodes)
            if n.dtype == x.dtype and _broadcasts(x.shape, n.shape) is not None
        ]
        yi = self.pick(candidates)
        y = self.nodes[yi]
        shape = _broadcasts(x.shape, y.shape)
        assert shape is not None
        bx, by = x.bound, y.bound
        bound = {
            "add": bx + by,
            "subtract": bx + by,
            "add_op": bx + by,
            "sub_op": bx + by,
            "multiply": bx * by,
            "mul_op": bx * by,
            "maximum": max(bx, by),
            "minimum": max(bx, by),
            "div_pos": bx,
        }[kind]
        attrs = {"operator": draw(st.booleans())} if kind == "div_pos" else {}
        return Node(kind, (xi, yi), attrs, shape, x.dtype, bound)

    def nary(self, kind: str, xi: int, x: Node) -> Node:
        draw = self.draw
        if kind == "add_n":  # of two or more: add_n([x]) is x itself, no op (as in TF)
            others = [self.pick(self.matching(x)) for _ in range(draw(st.integers(1, 3)))]
            inputs = (xi, *others)
            bound = sum(self.nodes[i].bound for i in inputs)
            return Node(kind, inputs, {}, x.shape, x.dtype, bound)
        rank = len(x.shape)
        if kind == "stack":
            if rank > 2:
                return self.unary("reduce", xi, x)
            others = [self.pick(self.matching(x)) for _ in range(draw(st.integers(0, 2)))]
            inputs = (xi, *others)
            axis = draw(st.integers(-rank - 1, rank))
            at = axis % (rank + 1)
            shape = (*x.shape[:at], len(inputs), *x.shape[at:])
            return Node(kind, inputs, {"axis": axis}, shape, x.dtype, x.bound)
        if not rank:
            return self.nary("stack", xi, x)
        axis = draw(st.integers(-rank, rank - 1))
        at = axis % rank
        fits = [
            i
            for i, n in enumerate(self.nodes)
            if n.dtype == x.dtype
            and len(n.shape) == rank
            and all(a == b for j, (a, b) in enumerate(zip(n.shape, x.shape)) if j != at)
        ]
        inputs = (xi, *(self.pick(fits) for _ in range(draw(st.integers(0, 2)))))
        width = sum(self.nodes[i].shape[at] for i in inputs)
        shape = tuple(width if j == at else d for j, d in enumerate(x.shape))
        bound = max(self.nodes[i].bound for i in inputs)
        return Node(kind, inputs, {"axis": axis}, shape, x.dtype, bound)


# -- whole cases -------------------------------------------------------------------------------
@st.composite
def fetch_structures(draw: st.DrawFn, nodes: tuple[Node, ...], upto: int) -> Any:
    """A few nodes of ``nodes[:upto]`` as a tensor, list, tuple or dict (nested) of fetches."""

    def leaf() -> Fetch:
        index = draw(st.integers(0, upto - 1))
        how = draw(st.sampled_from(["tensor", "tensor", "tensor", "tensor", "name", "op"]))
        if how == "op" and nodes[index].kind == "placeholder":
            how = "tensor"  # TF: running a Placeholder op as a target fails, fed or not
        return Fetch(index, how)

    shape = draw(st.sampled_from(["single", "list", "list", "tuple", "dict", "nested"]))
    if shape == "single":
        return Fetch(draw(st.integers(0, upto - 1)))
    leaves = [leaf() for _ in range(draw(st.integers(1, 5)))]
    if shape == "list":
        return leaves
    if shape == "tuple":
        return tuple(leaves)
    if shape == "dict":
        return {f"k{i}": f for i, f in enumerate(leaves)}
    return {"head": leaves[0], "rest": [tuple(leaves[1:]), leaf()]}


@st.composite
def cases(draw: st.DrawFn) -> Case:
    setup = draw(device_setups())
    builder = _Builder(draw, setup)
    n_nodes = draw(st.integers(1, MAX_NODES))
    grows = n_nodes > 1 and draw(st.integers(0, 3)) == 0
    n_first = draw(st.integers(1, n_nodes - 1)) if grows else n_nodes
    for i in range(n_nodes):
        builder.add(placed=n_first if i >= n_first else 0)
    nodes = tuple(builder.nodes)
    feeds = {}
    for i, node in enumerate(nodes):
        fed = node.kind == "placeholder" or (
            node.kind != "variable" and draw(st.integers(0, 11)) == 0
        )
        if fed:
            feeds[i] = draw(arrays(node.dtype, node.shape))
    by_name = frozenset(i for i in feeds if draw(st.integers(0, 3)) == 0)
    fetches = draw(fetch_structures(nodes, n_first))
    after = draw(fetch_structures(nodes, n_nodes)) if grows else None
    if after is not None and not any(f.index >= n_first for f in fetch_leaves(after)):
        after = [after, Fetch(n_nodes - 1)]
    return Case(setup, nodes, n_first, feeds, by_name, fetches, after)
