"""``pv.distribute``: data parallelism with one replica per device (``MirroredStrategy``)."""

from __future__ import annotations

from placeviz.distribute.context import (
    ReplicaContext,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
)
from placeviz.distribute.mirrored_strategy import MirroredStrategy, ReduceOp
from placeviz.distribute.values import MirroredVariable, PerReplica
