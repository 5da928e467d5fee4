"""``pv.keras``: enough of Keras for functional models of Dense layers, trained with fit."""

from __future__ import annotations

from placeviz.keras import backend, initializers, layers, losses, models, optimizers
from placeviz.keras.models import Model
