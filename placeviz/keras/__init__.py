"""``pv.keras``: enough of Keras for Sequential and functional models, trained with fit."""

from __future__ import annotations

from placeviz.keras import backend, initializers, layers, losses, models, optimizers
from placeviz.keras.models import Model, Sequential
