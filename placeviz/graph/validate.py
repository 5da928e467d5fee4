"""Check the ops a plan needs before it is compiled, as torch.fx's ``Graph.lint()`` does.

Graph construction checks each op as it is made, but a graph can change afterwards: a control
input added to an op (``op._add_control_input``) may close a cycle, and an op's fields can be
edited in place. Such a graph would otherwise fail deep in the executor, or hang; here it fails
with the op's name and source line.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from placeviz.errors import InvalidArgumentError, describe_op
from placeviz.graph import registry
from placeviz.graph.core import Operation


def validate(ops: Sequence[Operation]) -> bool:
    """Raise InvalidArgumentError for the first problem found among ``ops``; else say whether
    creation order is already a topological order (no edge points at a later op)."""
    back_edges = False
    for op in ops:
        for dep in dependencies(op):
            _check_member(op, dep)
            back_edges = back_edges or dep.id > op.id
        _check_signature(op)
    if back_edges:
        _check_acyclic(ops)
    return not back_edges


def dependencies(op: Operation) -> Iterator[Operation]:
    """The ops ``op`` waits for: its inputs' producers and its control inputs; a loop's Merge
    does not wait for its NextIteration (the back edge of a while loop, TF's rule)."""
    if op.type == "Merge":
        inputs = (t.op for t in op.inputs if t.op.type != "NextIteration")
        return itertools.chain(inputs, op.control_inputs)
    return itertools.chain((t.op for t in op.inputs), op.control_inputs)


def _check_member(op: Operation, dep: Operation) -> None:
    graph = op.graph
    if dep.graph is not graph or dep.id >= len(graph._ops) or graph._ops[dep.id] is not dep:
        raise InvalidArgumentError(
            f"Op {describe_op(op)} depends on {describe_op(dep)}, which is not an op of its graph",
            op=op,
        )


def _check_signature(op: Operation) -> None:
    """The op's inputs and outputs must be what its OpDef makes of them."""
    try:
        declared = registry.get(op.type)
    except KeyError:
        declared = None
    if declared is not op.op_def:
        raise InvalidArgumentError(
            f"Op {describe_op(op)} does not carry the OpDef registered for its type",
            op=op,
        )
    try:
        specs = op.op_def.infer(op.inputs, op.attrs)
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise InvalidArgumentError(
            f"Op {describe_op(op)} has inputs its OpDef does not accept: {exc}",
            op=op,
        ) from None
    made = [t.dtype for t in op.outputs]
    expected = [dtype for _, dtype in specs]
    if made != expected:
        raise InvalidArgumentError(
            f"Op {describe_op(op)} has outputs of dtypes {[d.name for d in made]}, but its "
            f"OpDef makes {[d.name for d in expected]} from its inputs",
            op=op,
        )


def _check_acyclic(ops: Sequence[Operation]) -> None:
    """Depth-first search over data and control edges; a cycle is reported op by op."""
    members = {op.id for op in ops}
    state: dict[int, int] = {}  # op id -> 1 on the current path, 2 finished
    for root in ops:
        if root.id in state:
            continue
        path: list[tuple[Operation, Iterator[Operation]]] = [(root, dependencies(root))]
        state[root.id] = 1
        while path:
            op, deps = path[-1]
            dep = next((d for d in deps if d.id in members and state.get(d.id) != 2), None)
            if dep is None:
                state[op.id] = 2
                path.pop()
            elif state.get(dep.id) == 1:
                ring = [o for o, _ in path[[o.id for o, _ in path].index(dep.id) :]]
                names = ", ".join(describe_op(o) for o in ring)
                raise InvalidArgumentError(
                    f"Graph is invalid, contains a cycle with {len(ring)} nodes, including: "
                    f"{names}",
                    op=ring[0],
                )
            else:
                state[dep.id] = 1
                path.append((dep, dependencies(dep)))
