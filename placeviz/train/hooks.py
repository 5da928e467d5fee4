"""TF1's session-run hooks: what a ``MonitoredSession`` calls around each ``run``.

A hook asks for extra fetches (``before_run`` returns ``SessionRunArgs``), sees their values in
``after_run`` (``SessionRunValues``) and may stop the loop (``run_context.request_stop()``). Log
lines go to Python's ``logging`` (logger ``placeviz``) with TensorFlow's words.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from placeviz.graph.core import get_default_graph
from placeviz.graph.graph_keys import GraphKeys
from placeviz.train.training_util import get_global_step

logger = logging.getLogger("placeviz")


class SessionRunArgs(NamedTuple):
    """What a hook adds to the coming ``run``: fetches (any structure) and feeds."""

    fetches: Any
    feed_dict: Mapping[Any, Any] | None = None
    options: Any = None


class SessionRunValues(NamedTuple):
    """The values of a hook's fetches (None when its ``before_run`` asked for nothing)."""

    results: Any
    options: Any = None
    run_metadata: Any = None


class SessionRunContext:
    """One ``run`` as the hooks see it: the caller's arguments, the session, the stop flag."""

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        self.original_args = original_args
        self.session = session
        self._stop_requested = False

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested

    def request_stop(self) -> None:
        self._stop_requested = True


class SessionRunHook:
    """Does nothing at each point; subclasses override the points they need."""

    def begin(self) -> None:
        """Before the graph is finalized: the last chance to add ops."""

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Variables are initialized or restored."""

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        """After each ``run``, with the values ``before_run`` asked for."""

    def end(self, session: Any) -> None:
        """When the session closes without an error."""


class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (exactly one)."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self) -> None:
        self._last_triggered_step: int | None = None
        self._last_triggered_time: float | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        last_time = self._last_triggered_time
        if (
            self._every_secs is not None
            and last_time is not None
            and time.time() >= last_time + self._every_secs
        ):
            return True
        return (
            self._every_steps is not None and step >= self._last_triggered_step + self._every_steps
        )

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """Seconds and steps since the last trigger (None at the first)."""
        now = time.time()
        if self._last_triggered_time is None:
            elapsed: tuple[float | None, int | None] = (None, None)
        else:
            elapsed = (now - self._last_triggered_time, step - (self._last_triggered_step or 0))
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed

    def last_triggered_step(self) -> int | None:
        return self._last_triggered_step


def _required_global_step(hook: str) -> Any:
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook}.")
    return step


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches ``last_step`` (or ``num_steps`` more)."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self) -> None:
        self._global_step = _required_global_step("StopAtStepHook")

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step)) + self._num_steps

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        # The step fetched may be read before or after this run incremented it: read it again.
        if (
            int(run_values.results) + 1 >= self._last_step
            and int(run_context.session.run(self._global_step)) >= self._last_step
        ):
            run_context.request_stop()


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session starts, every ``save_secs`` or ``save_steps``, and at
    the end. No ``graph.pbtxt`` or meta graph is written (placeviz has no GraphDef files)."""

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Any = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: Sequence[Any] | None = None,
    ) -> None:
        logger.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])

    def begin(self) -> None:
        self._global_step = _required_global_step("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = int(session.run(self._global_step))
        self._save(session, step)  # the state at the first step
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):
            step = int(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        step = int(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session: Any, step: int) -> bool:
        """Save; True when a listener asks to stop."""
        logger.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        logger.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step)
        logger.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        return any(listener.after_save(session, step) for listener in self._listeners)

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(
                f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the "
                "collection or provide a saver or scaffold."
            )
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one "
                "to use by passing it to the constructor."
            )
        self._saver = savers[0]
        return self._saver


class StepCounterHook(SessionRunHook):
    """Logs the global steps per second every ``every_n_steps`` (or ``every_n_secs``)."""

    def __init__(self, every_n_steps: int | None = 100, every_n_secs: float | None = None) -> None:
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)

    def begin(self) -> None:
        self._global_step = _required_global_step("StepCounterHook")

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs:
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            seconds, steps = self._timer.update_last_triggered_step(step)
            if seconds is not None and steps is not None and seconds > 0:
                logger.info("global_step/sec: %g", steps / seconds)


class LoggingTensorHook(SessionRunHook):
    """Logs tensors' values every ``every_n_iter`` runs or ``every_n_secs``, and/or at the end:
    ``tag = value, ...`` (with the seconds since the last line), or ``formatter(values)``."""

    def __init__(
        self,
        tensors: Mapping[str, Any] | Sequence[Any],
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs must be "
                "provided."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, Mapping):
            self._tag_order = sorted(tensors)
            self._tensors = dict(tensors)
        else:
            self._tag_order = list(tensors)
            self._tensors = {item: item for item in tensors}
        self._timer = (
            _NeverTimer()
            if only_at_end
            else SecondOrStepTimer(every_secs=every_n_secs, every_steps=every_n_iter)
        )
        self._log_at_end = at_end
        self._formatter = formatter

    def begin(self) -> None:
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _tensor(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context: SessionRunContext) -> SessionRunArgs | None:
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session: Any) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))

    def _log_tensors(self, values: dict[str, Any]) -> None:
        elapsed, _ = self._timer.update_last_triggered_step(self._iter_count)
        if self._formatter is not None:
            logger.info(self._formatter(values))
            return
        with np.printoptions(suppress=True):
            stats = ", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order)
        if elapsed is not None:
            logger.info("%s (%.3f sec)", stats, elapsed)
        else:
            logger.info("%s", stats)


def _tensor(obj: Any) -> Any:
    """A tensor, or a name: ``"loss"`` means ``"loss:0"``, as TF's hooks read names."""
    if isinstance(obj, str) and ":" not in obj:
        obj = f"{obj}:0"
    return get_default_graph().as_graph_element(obj) if isinstance(obj, str) else obj


class _NeverTimer(SecondOrStepTimer):
    """TF's ``NeverTriggerTimer``: for a LoggingTensorHook that logs only at the end."""

    def __init__(self) -> None:
        self.reset()

    def should_trigger_for_step(self, step: int) -> bool:
        return False

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        return None, None
