"""TF1's ``SyncReplicasOptimizer``: synchronous training of between-graph replicas.

Each replica's train op puts its gradients into one conditional accumulator per variable (on
the variable's device) and then takes a token from the ``sync_token_q`` queue (on the global
step's device), waiting there until the chief has updated the variables. The chief's queue
runner runs the sync op: it takes the mean of ``replicas_to_aggregate`` gradients from each
accumulator (waiting for them), applies the wrapped optimizer once, increments the global step
and puts ``max(total_num_replicas, replicas_to_aggregate)`` tokens holding the new step into
the queue. A replica sets its local step to the token it took; a gradient computed at an older
step than the accumulator's is dropped. The graph is TF 2.21's, op for op.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from placeviz.graph.core import Operation, Tensor, get_default_graph
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.ops import array_ops, state_ops
from placeviz.graph.ops.data_flow_ops import ConditionalAccumulator, FIFOQueue
from placeviz.graph.variables import Variable, global_variables, report_uninitialized_variables
from placeviz.train.hooks import SessionRunHook
from placeviz.train.monitored_session import ready_to_run
from placeviz.train.optimizer import Optimizer
from placeviz.train.queue_runner import QueueRunner


class SyncReplicasOptimizer(Optimizer):
    """Aggregates ``replicas_to_aggregate`` replicas' gradients, then lets ``opt`` apply their
    mean once per global step."""

    def __init__(
        self,
        opt: Optimizer,
        replicas_to_aggregate: int,
        total_num_replicas: int | None = None,
        variable_averages: Any = None,
        variables_to_average: Sequence[Variable] | None = None,
        use_locking: bool = False,
        name: str = "sync_replicas",
    ) -> None:
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._gradients_applied = False
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._global_step: Variable | None = None
        self._sync_token_queue: FIFOQueue | None = None
        self._chief_queue_runner: QueueRunner | None = None
        self._accumulator_list: list[tuple[ConditionalAccumulator, str]] = []
        self.local_step_init_op: Tensor | None = None
        self.ready_for_local_init_op: Tensor | None = None
        self.chief_init_op: Operation | None = None

    def compute_gradients(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped optimizer's (clip them per replica here, before they are averaged)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(  # type: ignore[override]
        self,
        grads_and_vars: Sequence[tuple[Tensor | None, Variable]],
        global_step: Variable | None = None,
        name: str | None = None,
    ) -> Tensor:
        """Builds the accumulators, the token queue and the chief's sync op; returns each
        replica's train op (its local step set to the token it took)."""
        pairs = list(grads_and_vars)
        if not pairs:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = get_default_graph()
        train_ops: list[Operation] = []
        aggregated: list[Tensor | None] = []
        local_anchor = state_ops.no_op()
        with graph.colocate_with(local_anchor):
            self._local_step = Variable(
                initial_value=0,
                trainable=False,
                collections=[GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype,
                name="sync_rep_local_step",
            )
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        chief_init_ops: list[Any] = [self.local_step_init_op]
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())
        with graph.name_scope(self._name):
            for grad, var in pairs:
                with graph.device(var.device):
                    if grad is None:
                        aggregated.append(None)  # passed through
                        continue
                    if not isinstance(grad, Tensor):
                        raise ValueError("Unknown grad type!")
                    accumulator = ConditionalAccumulator(
                        grad.dtype, shape=var.get_shape(), shared_name=var.name + "/grad_accum"
                    )
                    train_ops.append(accumulator.apply_grad(grad, local_step=self._local_step))
                    aggregated.append(accumulator.take_grad(self._replicas_to_aggregate))
                    self._accumulator_list.append((accumulator, var.device))
            variables = [v for _, v in pairs]
            with graph.device(global_step.device), graph.name_scope(""):
                update_op = self._opt.apply_gradients(list(zip(aggregated, variables)), global_step)
            with graph.device(global_step.device), graph.name_scope(""):
                queue = FIFOQueue(
                    -1,
                    global_step.dtype.base_dtype,
                    shapes=(),
                    name="sync_token_q",
                    shared_name="sync_token_q",
                )
                self._sync_token_queue = queue
            with graph.device(global_step.device), graph.name_scope(""):
                with graph.control_dependencies(train_ops):
                    token = queue.dequeue()
                train_op = state_ops.assign(self._local_step, token)
                with graph.control_dependencies([update_op]):
                    tokens = array_ops.fill([self._tokens_per_step], global_step)
                    sync_op: Any = queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with graph.control_dependencies([sync_op]), graph.name_scope(""):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                self._chief_queue_runner = QueueRunner(queue, [sync_op])
            for accumulator, device in self._accumulator_list:
                with graph.device(device):
                    chief_init_ops.append(
                        accumulator.set_global_step(global_step, name="SetGlobalStep")
                    )
            self.chief_init_op = state_ops.group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def get_chief_queue_runner(self) -> QueueRunner:
        """The runner of the sync op, for the chief alone."""
        if self._gradients_applied is False or self._chief_queue_runner is None:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args: Any, **kwargs: Any) -> Any:
        return self._opt.get_slot(*args, **kwargs)

    def variables(self) -> list[Variable]:
        """The wrapped optimizer's (not the local step)."""
        return self._opt.variables()

    def get_slot_names(self, *args: Any, **kwargs: Any) -> list[str]:
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens: int = -1) -> Operation:
        """The op that puts the first tokens into the queue (``replicas_to_aggregate`` of them
        by default): the chief runs it once, so that replicas can start."""
        if self._gradients_applied is False:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        assert self._global_step is not None and self._sync_token_queue is not None
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(
                f"Too few tokens to finish the first step: {num_tokens} (given) vs "
                f"{tokens_needed} (needed)"
            )
        graph = get_default_graph()
        if num_tokens > 0:
            with graph.device(self._global_step.device), graph.name_scope(""):
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return state_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> SessionRunHook:
        """The hook that initializes the local step (and, on the chief, the accumulators'
        steps and the first tokens) and starts the chief's queue runner."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    def __init__(self, sync_optimizer: SyncReplicasOptimizer, is_chief: bool, num_tokens: int):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self) -> None:
        opt = self._sync_optimizer
        if opt._gradients_applied is False:
            raise ValueError(
                "SyncReplicasOptimizer.apply_gradient should be called before using the hook."
            )
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op: Any = opt.chief_init_op
            self._q_runner: QueueRunner | None = opt.get_chief_queue_runner()
            self._init_tokens_op: Operation | None = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session: Any, coord: Any) -> None:
        ready, message = ready_to_run(self._ready_for_local_init_op, session)
        if not ready:
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                f"Init op: {self._local_init_op.name}, error: {message}"
            )
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
