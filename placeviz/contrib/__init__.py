"""``pv.contrib``: the few TF1 contrib helpers the seed programs call."""

from __future__ import annotations

from placeviz.contrib import framework

__all__ = ["framework"]
