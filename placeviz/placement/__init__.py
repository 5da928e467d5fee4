"""``pv.placement``: where ops go — TensorFlow's placer (``placer.py``) and a scheduling core
(``scheduling.py``) that places a task graph on devices by simulating it."""

from placeviz.placement.scheduling import InfeasibleScheduleError, Schedule, schedule

__all__ = ["InfeasibleScheduleError", "Schedule", "schedule"]
