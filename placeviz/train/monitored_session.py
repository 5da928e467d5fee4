"""TF1's ``MonitoredSession`` and ``MonitoredTrainingSession``: a session that initializes or
restores the variables, runs hooks around every ``run`` and saves checkpoints.

As TensorFlow's: hooks' ``begin`` runs before the graph is finalized (no op may be added while
the session is open); the chief restores the latest checkpoint in ``checkpoint_dir`` when one
exists and runs the init op otherwise, then checks the model is ready; a worker waits (polling
every 30 seconds, up to ``max_wait_secs``) until the chief has made it ready; hooks get the
session's ``Coordinator`` (queue runners they start stop with it when the session closes);
``with`` swallows ``OutOfRangeError`` and ``StopIteration`` (the end of the data). Differences:
no summaries, ``graph.pbtxt`` or meta graph are written, the ready ops report variables only
(placeviz has no other resources to initialize), and a session that fails is not recreated.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from placeviz.errors import DeadlineExceededError, OutOfRangeError
from placeviz.graph.core import Graph, Operation, Tensor, get_default_graph
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from placeviz.runtime.config import ConfigProto
from placeviz.runtime.session import Session
from placeviz.train.coordinator import Coordinator
from placeviz.train.hooks import (
    CheckpointSaverHook,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    StepCounterHook,
)
from placeviz.train.saver import Saver, get_checkpoint_state, latest_checkpoint

logger = logging.getLogger("placeviz")

USE_DEFAULT = object()


# How long a worker's session creator sleeps between checks that the chief made the model ready
# (TF's SessionManager default).
RECOVERY_WAIT_SECS = 30


class Scaffold:
    """The ops a monitored session needs: the init op, the ready ops (the names of variables
    without a value: all of them, and the global ones the local init op may read), the local
    init op and the saver; each one not given is taken from its graph collection, or made (and
    put there)."""

    def __init__(
        self,
        init_op: Operation | None = None,
        init_feed_dict: dict[Any, Any] | None = None,
        init_fn: Callable[[Scaffold, Session], None] | None = None,
        ready_op: Tensor | None = None,
        ready_for_local_init_op: Tensor | None = None,
        local_init_op: Operation | None = None,
        saver: Saver | None = None,
    ) -> None:
        self.init_op = init_op
        self.init_feed_dict = init_feed_dict
        self.init_fn = init_fn
        self.ready_op = ready_op
        self.ready_for_local_init_op = ready_for_local_init_op
        self.local_init_op = local_init_op
        self.saver = saver

    def finalize(self) -> None:
        """Make the missing ops, then finalize the graph."""
        if self.init_op is None:
            self.init_op = _get_or_default(
                "init_op", GraphKeys.INIT_OP, global_variables_initializer
            )
        if self.ready_op is None:
            self.ready_op = _get_or_default(
                "ready_op", GraphKeys.READY_OP, report_uninitialized_variables
            )
        if self.ready_for_local_init_op is None:
            self.ready_for_local_init_op = _get_or_default(
                "ready_for_local_init_op",
                GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(global_variables()),
            )
        if self.local_init_op is None:
            self.local_init_op = _get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, local_variables_initializer
            )
        if self.saver is None:
            # TF builds a sharded Saver here; placeviz's Savers are not sharded.
            self.saver = _get_or_default("saver", GraphKeys.SAVERS, lambda: Saver(allow_empty=True))
        get_default_graph().finalize()
        logger.info("Graph was finalized.")


def _get_or_default(arg_name: str, key: str, make: Callable[[], Any]) -> Any:
    graph = get_default_graph()
    found = graph.get_collection(key)
    if len(found) > 1:
        raise RuntimeError(
            f'More than one item in the collection "{key}". Please indicate which one to use by '
            f"passing it to the tf.Scaffold constructor as: tf.Scaffold({arg_name}=item to use)"
        )
    if found:
        return found[0]
    made = make()
    graph.add_to_collection(key, made)
    return made


class ChiefSessionCreator:
    """Creates the chief's session: restores the latest checkpoint, or initializes."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: ConfigProto | None = None,
        checkpoint_dir: str | None = None,
        checkpoint_filename_with_path: str | None = None,
    ) -> None:
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError(
                "Can not provide both checkpoint_dir and checkpoint_filename_with_path."
            )
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_path = checkpoint_filename_with_path

    def create_session(self) -> Session:
        scaffold = self._scaffold
        scaffold.finalize()
        sess = Session(self._master, graph=get_default_graph(), config=self._config)
        path = self._checkpoint_path
        if path is None and self._checkpoint_dir:
            path = latest_checkpoint(self._checkpoint_dir)
        if path is not None:
            scaffold.saver.restore(sess, path)
            state = get_checkpoint_state(self._checkpoint_dir) if self._checkpoint_dir else None
            if state is not None and scaffold.saver.saver_def is not None:
                scaffold.saver.recover_last_checkpoints(state.all_model_checkpoint_paths)
        else:
            sess.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
            if scaffold.init_fn is not None:
                scaffold.init_fn(scaffold, sess)
        init = f"Init op: {_name(scaffold.init_op)}, init fn: {scaffold.init_fn}"
        ready, message = ready_to_run(scaffold.ready_for_local_init_op, sess)
        if not ready:
            raise RuntimeError(
                f"Init operations did not make model ready for local_init.  {init}, error: "
                f"{message}"
            )
        logger.info("Running local_init_op.")
        sess.run(scaffold.local_init_op)
        logger.info("Done running local_init_op.")
        ready, message = ready_to_run(scaffold.ready_op, sess)
        if not ready:
            raise RuntimeError(
                f"Init operations did not make model ready.  {init}, local_init_op: "
                f"{_name(scaffold.local_init_op)}, error: {message}"
            )
        return sess


class WorkerSessionCreator:
    """A non-chief worker's session: it initializes only the local variables, relying on the
    chief for the rest (a cluster task shares the chief's variables): until the chief has made
    the model ready it closes the session, waits and tries a new one, for ``max_wait_secs``."""

    def __init__(
        self,
        scaffold: Scaffold | None = None,
        master: str = "",
        config: ConfigProto | None = None,
        max_wait_secs: float = 30 * 60,
    ) -> None:
        self._scaffold = scaffold or Scaffold()
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def create_session(self) -> Session:
        scaffold = self._scaffold
        scaffold.finalize()
        deadline = time.monotonic() + self._max_wait_secs
        while True:
            sess = Session(self._master, graph=get_default_graph(), config=self._config)
            not_ready = None
            ready, not_ready_local = ready_to_run(scaffold.ready_for_local_init_op, sess)
            if ready:
                sess.run(scaffold.local_init_op)  # local variables are each worker's own
                ready, not_ready = ready_to_run(scaffold.ready_op, sess)
                if ready:
                    return sess
            sess.close()
            if deadline - time.monotonic() - RECOVERY_WAIT_SECS < 0:
                raise DeadlineExceededError(
                    f"Session was not ready after waiting {int(self._max_wait_secs)} secs."
                )
            logger.info(
                "Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s",
                not_ready_local,
                not_ready,
            )
            time.sleep(RECOVERY_WAIT_SECS)


def ready_to_run(op: Tensor | None, sess: Session) -> tuple[bool, str | None]:
    """TF's ``session_manager._ready``: whether ``op`` names no uninitialized variable, and
    otherwise the words saying which."""
    if op is None:
        return True, None
    names = sess.run(op)
    if names is None or names.size == 0:
        return True, None
    listed = ", ".join(n.decode("utf-8") if isinstance(n, bytes) else str(n) for n in names)
    return False, f"Variables not initialized: {listed}"


def _name(op: Any) -> str | None:
    return None if op is None else op.name


class MonitoredSession:
    """A session that calls its hooks around each ``run`` and stops when one asks."""

    def __init__(
        self,
        session_creator: ChiefSessionCreator | WorkerSessionCreator | None = None,
        hooks: Sequence[SessionRunHook] | None = None,
        stop_grace_period_secs: float = 120,
    ) -> None:
        self._graph = get_default_graph()
        self._graph_was_finalized = self._graph.finalized
        self._hooks = list(hooks or [])
        for hook in self._hooks:
            hook.begin()
        self._stop_grace_period_secs = stop_grace_period_secs
        self._sess: Session | None = (session_creator or ChiefSessionCreator()).create_session()
        self._should_stop = False
        self._coord = Coordinator()
        for hook in self._hooks:
            hook.after_create_session(self._sess, self._coord)

    @property
    def graph(self) -> Graph:
        return self._graph

    def raw_session(self) -> Session:
        if self._sess is None:
            raise RuntimeError("Session is already closed.")
        return self._sess

    def should_stop(self) -> bool:
        return self._sess is None or self._should_stop or self._coord.should_stop()

    def run(
        self,
        fetches: Any,
        feed_dict: dict[Any, Any] | None = None,
        options: Any = None,
        run_metadata: Any = None,
    ) -> Any:
        """``sess.run(fetches)`` with each hook's fetches and feeds added; returns the caller's."""
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        sess = self.raw_session()
        context = SessionRunContext(SessionRunArgs(fetches, feed_dict), sess)
        all_fetches: dict[Any, Any] = {"caller": fetches}
        feeds = self._hook_feeds(context, all_fetches, feed_dict)
        outputs = sess.run(all_fetches, feed_dict=feeds, options=options, run_metadata=run_metadata)
        for hook in self._hooks:
            values = SessionRunValues(outputs.get(hook), options, run_metadata)
            hook.after_run(context, values)
        self._should_stop = self._should_stop or context.stop_requested
        return outputs["caller"]

    def _hook_feeds(
        self, context: SessionRunContext, fetches: dict[Any, Any], user: dict[Any, Any] | None
    ) -> dict[Any, Any] | None:
        """Each hook's fetches go into ``fetches`` under the hook; returns all the feeds."""
        hook_feeds: dict[Any, Any] = {}
        for hook in self._hooks:
            request = hook.before_run(context)
            if request is None:
                continue
            if request.fetches is not None:
                fetches[hook] = request.fetches
            if request.feed_dict:
                _refuse_overlap(hook_feeds, request.feed_dict, "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
        if not hook_feeds:
            return user
        if not user:
            return hook_feeds
        _refuse_overlap(user, hook_feeds, "Same tensor is fed by a SessionRunHook and user.")
        return {**user, **hook_feeds}

    def close(self) -> None:
        self._close(error=False)

    def _close(self, error: bool) -> None:
        if self._sess is None:
            return
        try:
            if not error:
                for hook in self._hooks:
                    hook.end(self._sess)
        finally:
            # The threads hooks started (queue runners) stop; one still running after the
            # grace period is left behind, as TF leaves it.
            self._coord.request_stop()
            try:
                self._coord.join(
                    stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True
                )
            finally:
                self._sess.close()
                self._sess = None
            if not self._graph_was_finalized:
                self._graph._finalized = False  # TF's _unsafe_unfinalize: the graph grows again

    def __enter__(self) -> MonitoredSession:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> bool:
        ended = exc_type is not None and issubclass(exc_type, OutOfRangeError | StopIteration)
        self._close(error=exc_type is not None and not ended)
        return exc_type is None or ended


def _refuse_overlap(first: dict[Any, Any], second: dict[Any, Any], message: str) -> None:
    overlap = set(first) & set(second)
    if overlap:
        names = ", ".join(sorted(getattr(t, "name", str(t)) for t in overlap))
        raise RuntimeError(f"{message} Conflict(s): {names}")


def MonitoredTrainingSession(
    master: str = "",
    is_chief: bool = True,
    checkpoint_dir: str | None = None,
    scaffold: Scaffold | None = None,
    hooks: Sequence[SessionRunHook] | None = None,
    chief_only_hooks: Sequence[SessionRunHook] | None = None,
    save_checkpoint_secs: Any = USE_DEFAULT,
    save_summaries_steps: Any = USE_DEFAULT,
    save_summaries_secs: Any = USE_DEFAULT,
    config: ConfigProto | None = None,
    stop_grace_period_secs: float = 120,
    log_step_count_steps: int | None = 100,
    max_wait_secs: float = 7200,
    save_checkpoint_steps: Any = USE_DEFAULT,
    summary_dir: str | None = None,
) -> MonitoredSession:
    """A MonitoredSession for training, with TF's default hooks: the chief counts steps and,
    given ``checkpoint_dir``, saves every ``save_checkpoint_secs`` (600) or
    ``save_checkpoint_steps``. placeviz writes no summaries: ``save_summaries_*`` are accepted
    so TF code runs, and do nothing."""
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    scaffold = scaffold or Scaffold()
    if not is_chief:
        creator = WorkerSessionCreator(scaffold, master, config, max_wait_secs)
        return MonitoredSession(creator, hooks, stop_grace_period_secs)
    all_hooks: list[SessionRunHook] = list(chief_only_hooks or [])
    creator = ChiefSessionCreator(scaffold, master, config, checkpoint_dir)
    if (summary_dir or checkpoint_dir) and log_step_count_steps and log_step_count_steps > 0:
        all_hooks.append(StepCounterHook(every_n_steps=log_step_count_steps))
    if checkpoint_dir and (
        (save_checkpoint_secs and save_checkpoint_secs > 0)
        or (save_checkpoint_steps and save_checkpoint_steps > 0)
    ):
        all_hooks.append(
            CheckpointSaverHook(
                checkpoint_dir,
                save_steps=save_checkpoint_steps,
                save_secs=save_checkpoint_secs,
                scaffold=scaffold,
            )
        )
    all_hooks.extend(hooks or [])
    return MonitoredSession(creator, all_hooks, stop_grace_period_secs)
