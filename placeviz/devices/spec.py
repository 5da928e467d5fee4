"""Device specifications: the one place placeviz parses and prints device names.

Every other module takes a ``DeviceSpec`` (or a string passed through ``DeviceSpec.coerce``), so
the accepted spellings, the canonical printout and the error for a malformed name are decided here
and nowhere else. Semantics follow TensorFlow 2's ``DeviceSpecV2``; the differences are noted where
they occur.
"""

from __future__ import annotations

import operator
import re
from typing import Any

# The types TF 2.21's parser accepts in the short form ``/<type>[:<index>|:*]``, in any case
# (``DeviceSpecV2._get_valid_device_types`` without pluggable devices).
_RUNTIME_NAME = re.compile("[A-Za-z][A-Za-z0-9_]*")
_SHORT_FORM_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU"})
_UNKNOWN_HINT = (
    "expected job:<name>, replica:<int>, task:<int>, device:<TYPE>:<index> (or :*), "
    "or <type>[:<index>] for one of cpu, gpu, tpu, custom, epu"
)

_FIELDS = ("job", "replica", "task", "device_type", "device_index")
_LEGACY_TYPES = {"cpu": "CPU", "gpu": "GPU"}  # TF upper-cases these spellings, and only these
# Placement preference among device types; every other type ranks after these.
_TYPE_RANK = {"GPU": 0, "CPU": 1}
_OTHER_TYPE_RANK = len(_TYPE_RANK)


class DeviceSpec:
    """A possibly partial device name: every field may be unset (``None``).

    Immutable and hashable, as TF2's ``DeviceSpecV2``, so specs can key dicts and be shared
    between graph scopes without copying.
    """

    __slots__ = ("_device_index", "_device_type", "_job", "_replica", "_task")

    _job: str | None
    _replica: int | None
    _task: int | None
    _device_type: str | None
    _device_index: int | None

    def __init__(
        self,
        job: str | None = None,
        replica: int | None = None,
        task: int | None = None,
        device_type: str | None = None,
        device_index: int | None = None,
    ) -> None:
        device_type = _check_str("device_type", device_type)
        object.__setattr__(self, "_job", _check_str("job", job))
        object.__setattr__(self, "_replica", _check_index("replica", replica))
        object.__setattr__(self, "_task", _check_index("task", task))
        object.__setattr__(self, "_device_type", _LEGACY_TYPES.get(device_type, device_type))
        object.__setattr__(self, "_device_index", _check_index("device_index", device_index))

    @classmethod
    def from_string(cls, spec: str) -> DeviceSpec:
        """Parse a device name, accepting and rejecting what TF 2.21's ``DeviceSpec`` does.

        That parser is lenient: empty components are skipped, a repeated job, replica or task
        takes the last value, and values are not checked beyond ``int()`` (``/job:1a``,
        ``/task:-1`` parse; no device has them, so placing an op there fails later). A
        ``ValueError`` quoting ``spec`` says what it could not read.
        """
        if not isinstance(spec, str):
            raise TypeError(f"A device specification must be a str, got {type(spec).__name__}")
        fields: dict[str, Any] = {}
        try:
            for component in spec.split("/"):
                _read_component(component.split(":"), fields)
            return cls(**fields)
        except ValueError as err:
            raise ValueError(f"Malformed device specification {spec!r}: {err}") from None

    @classmethod
    def coerce(cls, value: DeviceSpec | str | None) -> DeviceSpec:
        """Accept what users pass to ``device(...)``: a spec, a device string, or ``None`` (any)."""
        if isinstance(value, DeviceSpec):
            return value
        if isinstance(value, str):
            return cls.from_string(value)
        if value is None:
            return cls()
        raise TypeError(
            f"Expected a DeviceSpec, a device string or None, got {type(value).__name__}: {value!r}"
        )

    @property
    def job(self) -> str | None:
        return self._job

    @property
    def replica(self) -> int | None:
        return self._replica

    @property
    def task(self) -> int | None:
        return self._task

    @property
    def device_type(self) -> str | None:
        return self._device_type

    @property
    def device_index(self) -> int | None:
        return self._device_index

    @property
    def is_empty(self) -> bool:
        return self._astuple() == (None,) * len(_FIELDS)

    @property
    def is_fully_specified(self) -> bool:
        return None not in self._astuple()

    def runtime_problem(self) -> str | None:
        """Why TensorFlow's runtime (C++ ``DeviceNameUtils``) would call this name malformed.

        Its Python parser lets through names the runtime rejects when it places the op: a job or
        type that is not ``[A-Za-z][A-Za-z0-9_]*`` (``job:*`` means any job), a negative number.
        """
        job = None if self._job == "*" else self._job
        for field, value in (("job", job), ("device_type", self._device_type)):
            if value is not None and not _RUNTIME_NAME.fullmatch(value):
                return f"{field} {value!r} does not match [A-Za-z][A-Za-z0-9_]*"
        for field in ("replica", "task", "device_index"):
            value = getattr(self, field)
            if value is not None and value < 0:
                return f"{field} {value} is negative"
        return None

    def to_string(self) -> str:
        """Canonical name: set fields in TF's order, device always as ``/device:<TYPE>:<index>``
        (an index without a type names nothing: TF leaves it out, and so the name)."""
        parts = []
        if self._job is not None:
            parts.append(f"/job:{self._job}")
        if self._replica is not None:
            parts.append(f"/replica:{self._replica}")
        if self._task is not None:
            parts.append(f"/task:{self._task}")
        if self._device_type is not None:
            index = "*" if self._device_index is None else self._device_index
            parts.append(f"/device:{self._device_type}:{index}")
        return "".join(parts)

    def merge_from(self, other: DeviceSpec | str | None) -> DeviceSpec:
        """Nest ``other`` inside ``self``: its set fields win, unset ones are inherited.

        Unlike TF1's ``merge_from``, which mutates, this returns a new spec (specs are immutable,
        as in TF2). Fields merge one by one, so ``/device:GPU:1`` merged with ``/device:CPU:*``
        gives ``/device:CPU:1``, as in TensorFlow.
        """
        theirs = DeviceSpec.coerce(other)
        return DeviceSpec(
            *(
                mine if their_value is None else their_value
                for mine, their_value in zip(self._astuple(), theirs._astuple(), strict=True)
            )
        )

    def make_merged_spec(self, other: DeviceSpec | str | None) -> DeviceSpec:
        """TF2's name for ``merge_from``."""
        return self.merge_from(other)

    def replace(self, **fields: Any) -> DeviceSpec:
        """A copy with the named fields changed (``None`` unsets one); specs cannot be edited."""
        unknown = sorted(fields.keys() - set(_FIELDS))
        if unknown:
            raise TypeError(
                f"DeviceSpec.replace() got unknown field(s) {', '.join(unknown)}; "
                f"fields are {', '.join(_FIELDS)}"
            )
        values = dict(zip(_FIELDS, self._astuple(), strict=True))
        values.update(fields)
        return DeviceSpec(**values)

    def matches(self, device: DeviceSpec | str) -> bool:
        """Whether ``device`` satisfies this (partial) request: every field set here is equal."""
        other = DeviceSpec.coerce(device)
        mine = self if self._job != "*" else self.replace(job=None)  # TF's C++ reads job:* as any
        return all(
            field is None or field == theirs
            for field, theirs in zip(mine._astuple(), other._astuple(), strict=True)
        )

    def sort_key(self) -> tuple[str, int, int, int, str, int]:
        """Key for placeviz's device order: job, replica, task, then GPU < CPU < others, then index.

        Indices compare as numbers, so ``GPU:2`` precedes ``GPU:10``; TensorFlow compares names as
        strings and puts ``GPU:10`` first, which placeviz deliberately does not copy. Unset fields
        sort before set ones.
        """
        if self._device_type is None:
            type_rank = -1
        else:
            type_rank = _TYPE_RANK.get(self._device_type, _OTHER_TYPE_RANK)
        return (
            self._job or "",
            _or_minus_one(self._replica),
            _or_minus_one(self._task),
            type_rank,
            self._device_type or "",
            _or_minus_one(self._device_index),
        )

    def _astuple(self) -> tuple[Any, ...]:
        return (self._job, self._replica, self._task, self._device_type, self._device_index)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"DeviceSpec is immutable; use replace() to change {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"DeviceSpec is immutable; cannot delete {name!r}")

    def __reduce__(self) -> tuple[type[DeviceSpec], tuple[Any, ...]]:
        # The default slot-based pickling would go through the blocked __setattr__.
        return (DeviceSpec, self._astuple())

    def __eq__(self, other: object) -> bool:
        """Specs with the same name are equal, as in TF (an index without a type is not named)."""
        if not isinstance(other, DeviceSpec):
            return NotImplemented
        return self.to_string() == other.to_string()

    def __hash__(self) -> int:
        return hash(self.to_string())

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        if self.is_empty:
            return "DeviceSpec()"
        return f"DeviceSpec.from_string({self.to_string()!r})"


def _check_str(field: str, value: object) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"DeviceSpec {field} must be None or a str, got {type(value).__name__}")


def _check_index(field: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"DeviceSpec {field} must be None or an int, got bool {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(
            f"DeviceSpec {field} must be None or an int, got {type(value).__name__} {value!r}"
        ) from None


def _read_component(parts: list[str], fields: dict[str, Any]) -> None:
    """One ``/``-separated component, split at ``:``, read as TF's ``_string_to_components``."""
    key, count = parts[0], len(parts)
    if count == 2 and key in ("job", "replica", "task"):
        fields[key] = parts[1] if key == "job" else _as_int(key, parts[1])
    elif count in (1, 2) and key.upper() in _SHORT_FORM_TYPES:
        _set_device(fields, key.upper(), parts[1] if count == 2 else "*")
    elif count == 3 and key == "device":
        _set_device(fields, parts[1], parts[2])
    elif key:
        raise ValueError(f"unknown attribute '{key}' in '{':'.join(parts)}'; {_UNKNOWN_HINT}")


def _set_device(fields: dict[str, Any], device_type: str, index: str) -> None:
    if "device_type" in fields:
        raise ValueError("multiple device types are not allowed")
    fields["device_type"] = device_type
    if index != "*":
        fields["device_index"] = _as_int("device index", index)


def _as_int(what: str, text: str) -> int:
    """Python's ``int()``, as TF uses: ' 1', '+1' and '1_0' are numbers; '1.5' and '' are not."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not an integer") from None


def _or_minus_one(value: int | None) -> int:
    return -1 if value is None else value


def short_name(device_name: str) -> str:
    """'/job:localhost/replica:0/task:0/device:GPU:0' -> 'GPU:0'; a cluster task's device keeps
    its task: '/job:ps/replica:0/task:1/device:CPU:0' -> '/job:ps/task:1/CPU:0'."""
    prefix, _, device = device_name.rpartition("device:")
    if not prefix.startswith("/job:") or prefix.startswith("/job:localhost/"):
        return device
    job = prefix.split("/")[1]
    task = next((part for part in prefix.split("/") if part.startswith("task:")), "task:0")
    return f"/{job}/{task}/{device}"
