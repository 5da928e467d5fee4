"""TF1's ``tf.train.Saver`` and the ``checkpoint`` state file beside its checkpoints.

The Saver builds TensorFlow's graph (``save/filename``, ``save/Const``, ``save/SaveV2``,
``save/control_dependency``, ``save/RestoreV2`` on ``/device:CPU:0``, one ``save/Assign*`` per
variable colocated with it, ``save/restore_all``) so a graph with a Saver places as TF places it;
the files the ops write are placeviz's own format (``placeviz.graph.checkpoint_io``). No meta
graph (``.meta``) is written: placeviz has no MetaGraphDef.
"""

from __future__ import annotations

import json
import logging
import numbers
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from placeviz import dtypes, errors
from placeviz.graph import checkpoint_io
from placeviz.graph.core import get_default_graph
from placeviz.graph.graph_keys import GraphKeys
from placeviz.graph.ops import io_ops, state_ops
from placeviz.graph.ops.constant_op import constant
from placeviz.graph.variables import Variable, global_variables
from placeviz.runtime.session import Session

logger = logging.getLogger("placeviz")

STATE_FILENAME = "checkpoint"


@dataclass
class SaverDef:
    """TF's ``SaverDef`` proto fields; ``version`` 2 is ``SaverDef.V2``."""

    filename_tensor_name: str
    save_tensor_name: str
    restore_op_name: str
    max_to_keep: int
    sharded: bool
    keep_checkpoint_every_n_hours: float
    version: int = 2


@dataclass
class CheckpointState:
    """TF's ``CheckpointState`` proto: what the ``checkpoint`` file says."""

    model_checkpoint_path: str
    all_model_checkpoint_paths: list[str] = field(default_factory=list)


class Saver:
    """Saves and restores variables; ``save`` returns the checkpoint's prefix."""

    def __init__(
        self,
        var_list: Sequence[Variable] | Mapping[str, Variable] | None = None,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        allow_empty: bool = False,
        pad_step_number: bool = False,
        save_relative_paths: bool = False,
        filename: str | None = None,
    ) -> None:
        if sharded:
            raise NotImplementedError(
                "placeviz builds non-sharded Savers only (one SaveV2, one RestoreV2)"
            )
        if reshape:
            raise NotImplementedError("placeviz's Saver restores values of the saved shape only")
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._last_checkpoints: list[tuple[str, float]] = []
        self._to_delete: list[tuple[str, float]] = []
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        named = _named_variables(var_list)
        self.saver_def: SaverDef | None = None
        self._variables: list[tuple[str, Variable]] = sorted(named.items())
        if not self._variables:
            if not allow_empty:
                raise ValueError("No variables to save")
            return
        self.saver_def = self._build(name, filename)

    def _build(self, name: str | None, filename: str | None) -> SaverDef:
        graph = self._variables[0][1].graph
        names = [n for n, _ in self._variables]
        refs = [v._ref for _, v in self._variables]
        with graph.as_default(), graph.name_scope(name or "save"):
            # Two placeholders, as TF builds them: the name "Const" is kept for old checkpoints.
            default = io_ops.placeholder_with_default(filename or "model", [], name="filename")
            filename_tensor = io_ops.placeholder_with_default(default, [], name="Const")
            save = _strings_op(
                "SaveV2",
                names,
                lambda n, s, scope: io_ops.save_v2(filename_tensor, n, s, refs, name=scope),
            )
            with (
                graph.name_scope("control_dependency") as scope,
                graph.colocate_with(filename_tensor.op),
                graph.control_dependencies([save]),
            ):
                save_tensor = state_ops.identity(filename_tensor, name=scope)
            with graph.device("cpu:0"):
                restored = _strings_op(
                    "RestoreV2",
                    names,
                    lambda n, s, scope: io_ops.restore_v2(
                        filename_tensor, n, s, [r.dtype.base_dtype for r in refs], name=scope
                    ),
                )
            assigns = []
            for ref, value in zip(refs, restored):
                assigns.append(
                    state_ops.assign(ref, value, validate_shape=ref.shape.is_fully_defined)
                )
            restore = state_ops.group(*assigns, name="restore_all")
        return SaverDef(
            filename_tensor_name=filename_tensor.name,
            save_tensor_name=save_tensor.name,
            restore_op_name=restore.name,
            max_to_keep=self._max_to_keep or 0,
            sharded=False,
            keep_checkpoint_every_n_hours=float(self._keep_hours),
        )

    def as_saver_def(self) -> SaverDef | None:
        return self.saver_def

    @property
    def last_checkpoints(self) -> list[str]:
        """The checkpoints not yet deleted, oldest first."""
        return [path for path, _ in self._last_checkpoints]

    def set_last_checkpoints_with_time(
        self, last_checkpoints_with_time: list[tuple[str, float]]
    ) -> None:
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths: Sequence[str]) -> None:
        """Adopt the checkpoints a ``checkpoint`` file lists that still exist (a restarted job)."""
        now = time.time()
        kept = [p for p in checkpoint_paths if checkpoint_io.exists(p)]
        self._last_checkpoints = [(p, now) for p in kept]

    def save(
        self,
        sess: Session,
        save_path: str,
        global_step: Any = None,
        latest_filename: str | None = None,
        write_meta_graph: bool = True,
        write_state: bool = True,
    ) -> str | None:
        """Write the variables to ``save_path`` (``save_path-<global_step>``); placeviz writes
        no meta graph, whatever ``write_meta_graph`` says."""
        if not isinstance(sess, Session):
            raise TypeError(f"'sess' must be a Session; {sess}")
        latest_filename = latest_filename or STATE_FILENAME
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, numbers.Integral):  # a tensor or variable
                global_step = sess.run(global_step)
            global_step = int(global_step)
            step = f"{global_step:08d}" if self._pad_step_number else str(global_step)
            checkpoint_file = f"{save_path}-{step}"
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename:
                raise ValueError(
                    f"'latest_filename' collides with 'save_path': '{latest_filename}' and "
                    f"'{save_path}'"
                )
        if self.saver_def is None:
            return None
        parent = os.path.dirname(save_path)
        try:
            written = sess.run(
                self.saver_def.save_tensor_name,
                {self.saver_def.filename_tensor_name: checkpoint_file},
            )
        except (errors.FailedPreconditionError, errors.NotFoundError) as exc:
            if parent and not os.path.isdir(parent):
                raise ValueError(
                    f"Parent directory of {save_path} doesn't exist, can't save."
                ) from None
            raise exc
        path = written.decode() if isinstance(written, bytes) else str(written)
        if write_state:
            self._record(path)
            update_checkpoint_state(
                parent, path, self.last_checkpoints, latest_filename, self._save_relative_paths
            )
            self._delete_old()
        return path

    def restore(self, sess: Session, save_path: str | None) -> None:
        if self.saver_def is None:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        prefix = os.fspath(save_path)
        if not checkpoint_io.exists(prefix):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {prefix}")
        logger.info("Restoring parameters from %s", prefix)
        try:
            self._check_shapes(prefix)
            sess.run(self.saver_def.restore_op_name, {self.saver_def.filename_tensor_name: prefix})
        except errors.NotFoundError as exc:
            missing = "a Variable name or other graph key that is missing"
            raise _restore_error(exc, missing) from None
        except errors.InvalidArgumentError as exc:
            mismatch = "a mismatch between the current graph and the graph"
            raise _restore_error(exc, mismatch) from None

    def _check_shapes(self, prefix: str) -> None:
        """TF's Assign refuses a value of another shape at run time; placeviz checks up front."""
        index = checkpoint_io.read_index(prefix)
        for name, variable in self._variables:
            entry = index.get(name)
            shape = variable.shape
            if (
                entry is None  # RestoreV2 reports a missing or mistyped tensor
                or entry["dtype"] != variable.dtype.base_dtype.name
                or not shape.is_fully_defined
                or entry["shape"] == shape.as_list()
            ):
                continue
            lhs, rhs = (",".join(map(str, dims)) for dims in (shape.as_list(), entry["shape"]))
            raise errors.InvalidArgumentError(
                f"Assign requires shapes of both tensors to match. lhs shape= [{lhs}] rhs shape= "
                f"[{rhs}]",
                op=variable.op,
            )

    def _record(self, path: str) -> None:
        if not self._max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != path]
        self._last_checkpoints.append((path, time.time()))
        if len(self._last_checkpoints) > self._max_to_keep:
            self._to_delete.append(self._last_checkpoints.pop(0))

    def _delete_old(self) -> None:
        """Delete the oldest checkpoint beyond ``max_to_keep``, unless it is the one kept every
        ``keep_checkpoint_every_n_hours``."""
        if not self._to_delete:
            return
        path, saved_at = self._to_delete.pop(0)
        if saved_at > self._next_checkpoint_time:
            self._next_checkpoint_time += self._keep_hours * 3600
            return
        for name in checkpoint_io.files(path):
            try:
                os.remove(name)
            except OSError as exc:
                logger.warning("Ignoring: %s", exc)


def _strings_op(op_type: str, names: list[str], build: Any) -> Any:
    """An op under its own scope with TF's two string Consts: ``<op>/tensor_names`` and
    ``<op>/shape_and_slices`` (whole tensors: empty slices)."""
    graph = get_default_graph()
    with graph.name_scope(op_type) as scope:
        tensor_names = constant(names, name="tensor_names")
        slices = constant([""] * len(names), name="shape_and_slices")
        return build(tensor_names, slices, scope)


def _named_variables(
    var_list: Sequence[Variable] | Mapping[str, Variable] | None,
) -> dict[str, Variable]:
    if var_list is None:
        graph = get_default_graph()
        var_list = global_variables() + graph.get_collection(GraphKeys.SAVEABLE_OBJECTS)
    if isinstance(var_list, Mapping):
        return dict(var_list)
    named: dict[str, Variable] = {}
    for variable in sorted(var_list, key=lambda v: v.name):
        if not isinstance(variable, Variable):
            raise TypeError(f"Variable to save is not a Variable: {variable}")
        name = variable.op.name
        if name in named:
            raise ValueError(f"At least two variables have the same name: {name}")
        named[name] = variable
    return named


def _restore_error(exc: errors.OpError, cause: str) -> errors.OpError:
    return type(exc)(
        f"Restoring from checkpoint failed. This is most likely due to {cause} from the "
        "checkpoint. Please ensure that you have not altered the graph expected based on the "
        f"checkpoint. Original error:\n\n{exc.message}",
        op=exc.op,
    )


# -- the ``checkpoint`` state file ---------------------------------------------------------------
def update_checkpoint_state(
    save_dir: str,
    model_checkpoint_path: str,
    all_model_checkpoint_paths: Sequence[str] | None = None,
    latest_filename: str | None = None,
    save_relative_paths: bool = False,
) -> None:
    """Write the state file in TF's text format (``model_checkpoint_path: "..."`` lines), so
    TensorFlow's own ``get_checkpoint_state`` reads it too."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if save_relative_paths:
        model_checkpoint_path = _relative(model_checkpoint_path, save_dir)
        paths = [_relative(p, save_dir) for p in paths]
    lines = [f"model_checkpoint_path: {json.dumps(model_checkpoint_path, ensure_ascii=False)}"]
    lines += [f"all_model_checkpoint_paths: {json.dumps(p, ensure_ascii=False)}" for p in paths]
    state_path = os.path.join(save_dir, latest_filename or STATE_FILENAME)
    text = ("\n".join(lines) + "\n").encode()
    checkpoint_io.write_atomically(state_path, lambda f: f.write(text))


def _relative(path: str, directory: str) -> str:
    return os.path.relpath(path, directory) if os.path.isabs(path) else path


def get_checkpoint_state(
    checkpoint_dir: str, latest_filename: str | None = None
) -> CheckpointState | None:
    """What the state file in ``checkpoint_dir`` says (relative paths joined to the directory);
    None without one."""
    state_path = os.path.join(checkpoint_dir, latest_filename or STATE_FILENAME)
    if not os.path.isfile(state_path):
        return None
    values: dict[str, list[str]] = {}
    with open(state_path) as f:
        for line in f:
            key, sep, value = line.partition(":")
            if sep and value.strip():
                values.setdefault(key.strip(), []).append(json.loads(value.strip()))
    model = values.get("model_checkpoint_path", [""])[0]
    if not model:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")

    def absolute(path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(checkpoint_dir, path)

    return CheckpointState(
        absolute(model), [absolute(p) for p in values.get("all_model_checkpoint_paths", [])]
    )


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The newest checkpoint's prefix, or None (no state file, or its checkpoint is gone)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    if checkpoint_io.exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    logger.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    return checkpoint_io.exists(checkpoint_prefix)


def _checkpoint_prefix(ckpt_dir_or_file: str) -> str:
    if os.path.isdir(ckpt_dir_or_file):
        prefix = latest_checkpoint(ckpt_dir_or_file)
        if prefix is None:
            raise ValueError(
                f"Couldn't find 'checkpoint' file or checkpoints in given directory "
                f"{ckpt_dir_or_file}"
            )
        return prefix
    return ckpt_dir_or_file


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """Each saved tensor's name and shape, sorted by name."""
    index = checkpoint_io.read_index(_checkpoint_prefix(ckpt_dir_or_file))
    return [(name, list(index[name]["shape"])) for name in sorted(index)]


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """One saved tensor's value (``name`` may end in ``:0``)."""
    prefix = _checkpoint_prefix(ckpt_dir_or_file)
    if name.endswith(":0"):
        name = name[:-2]
    entry = checkpoint_io.read_index(prefix).get(name)
    if entry is None:
        raise errors.NotFoundError(f"Key {name} not found in checkpoint")
    (value,) = checkpoint_io.read(prefix, [name], [dtypes.as_dtype(entry["dtype"])])
    return value
